package dev.metakit.inbox.support;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ChildJvmIT} again, the process tests' children on the newest JDK 21+ under /usr/lib/jvm
 * ({@link ChildrenOnNewestJava}).
 */
@ExtendWith(ChildrenOnNewestJava.class)
class ChildJvmOnNewestJavaIT extends ChildJvmIT {
}
