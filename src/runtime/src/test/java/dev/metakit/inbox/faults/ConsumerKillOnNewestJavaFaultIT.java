package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.ChildrenOnNewestJava;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link ConsumerKillFaultIT} again, the jar on the newest JDK 21+ under /usr/lib/jvm ({@link ChildrenOnNewestJava}). */
@ExtendWith(ChildrenOnNewestJava.class)
class ConsumerKillOnNewestJavaFaultIT extends ConsumerKillFaultIT {
}
