package dev.metakit.inbox.support;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

import static org.awaitility.Awaitility.await;

/**
 * Waits for a child process the tests started (the jar, ./run.sh, Kafka) to be ready, bounded by the CPU time the
 * process and its children spend rather than by the clock: on a loaded machine (two builds on two cores) a boot that
 * costs 7 s of CPU has taken over two minutes of wall time, which says how busy the machine is, not whether the boot
 * works. A boot fails when the process exits, or when it has spent {@code cpuLimit} of CPU without being ready (many
 * times its boot: it is stuck, not slow); a wall-clock bound of ten minutes remains for a process that is neither
 * ready nor spending CPU (a hang).
 */
public final class ChildBoot {
    private static final Duration HANG = Duration.ofMinutes(10);

    private ChildBoot() {
    }

    /**
     * Polls {@code ready} every {@code poll} until it answers true; throws when {@code process} exits first, names the
     * log to read, or when the process tree spent more than {@code cpuLimit} of CPU.
     */
    public static void awaitReady(Process process, String what, Path log, Duration cpuLimit, Duration poll,
                                  Callable<Boolean> ready) {
        ProcessHandle handle = process.toHandle();
        await(what + " ready").atMost(HANG).pollInterval(poll).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(what + " exited with " + process.exitValue() + "; see " + log);
            }
            Duration cpu = cpuTime(handle);
            if (cpu.compareTo(cpuLimit) > 0) {
                throw new IllegalStateException(what + " spent " + cpu.toSeconds() + " s of CPU without being ready"
                        + " (limit " + cpuLimit.toSeconds() + " s); see " + log);
            }
            return ready.call();
        });
    }

    /** The CPU time of the process and its descendants (./run.sh is a shell whose child is the JVM). */
    static Duration cpuTime(ProcessHandle process) {
        return java.util.stream.Stream.concat(java.util.stream.Stream.of(process), process.descendants())
                .map(p -> p.info().totalCpuDuration().orElse(Duration.ZERO))
                .reduce(Duration.ZERO, Duration::plus);
    }
}
