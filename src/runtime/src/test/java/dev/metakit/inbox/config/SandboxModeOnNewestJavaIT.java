package dev.metakit.inbox.config;

import dev.metakit.inbox.support.ChildrenOnNewestJava;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link SandboxModeIT} again, ./run.sh on the newest JDK 21+ under /usr/lib/jvm ({@link ChildrenOnNewestJava}). */
@ExtendWith(ChildrenOnNewestJava.class)
class SandboxModeOnNewestJavaIT extends SandboxModeIT {
}
