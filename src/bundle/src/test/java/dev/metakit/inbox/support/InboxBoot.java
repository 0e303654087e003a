package dev.metakit.inbox.support;

import org.apache.camel.main.Main;

import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;
import java.util.function.Function;

/**
 * How {@link RunningInbox} boots the bundle on camel-main. The bundle's own tests: {@link #BUNDLE}, its routes on
 * camel-main's platform-http and management servers. The standalone runtime's tests boot it as {@code java -jar} does
 * (their implementation, named in {@code META-INF/services/dev.metakit.inbox.support.InboxBoot}).
 */
public interface InboxBoot {

    /**
     * A camel-main configured and not started: the settings files of {@code workingDirectory} (its
     * application.properties) and whatever the run adds, with {@code environment} as the process environment.
     */
    Main boot(Function<String, String> environment, Path workingDirectory);

    /** The run's own route files (names without {@code .camel.yaml}) that come with the bundle's beans. */
    List<String> ownRouteFiles();

    /** The bundle alone: the route files a host gets, on camel-main's own servers. */
    InboxBoot BUNDLE = new InboxBoot() {
        @Override
        public Main boot(Function<String, String> environment, Path workingDirectory) {
            Main main = new Main();
            main.setPropertyPlaceholderLocations("file:" + workingDirectory.resolve("application.properties")
                    + ";optional=true");
            // the standalone run's own beans (its front door, the ops page) are the runtime's, as a host leaves them out
            main.configure().setRoutesExcludePattern("**/standalone.camel.yaml");
            return main;
        }

        @Override
        public List<String> ownRouteFiles() {
            return List.of();
        }
    };

    /** The runtime's, when its tests are the ones running; else {@link #BUNDLE}. */
    static InboxBoot loaded() {
        return ServiceLoader.load(InboxBoot.class).findFirst().orElse(BUNDLE);
    }
}
