package dev.metakit.inbox.support;

import dev.metakit.inbox.Application;
import org.apache.camel.main.Main;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

/**
 * The standalone runtime's tests boot the bundle the way {@code java -jar} boots it ({@link Application#boot}: the
 * startup checks, the application.properties of the working directory over the jar's, the run mode), with the run's
 * own beans (routes/standalone.camel.yaml: the front door, the ops page).
 */
public final class StandaloneBoot implements InboxBoot {
    @Override
    public Main boot(Function<String, String> environment, Path workingDirectory) {
        return Application.boot(environment, workingDirectory);
    }

    @Override
    public List<String> ownRouteFiles() {
        return List.of("standalone");
    }
}
