package dev.metakit.inbox;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.config.EnvironmentNames;
import org.apache.camel.main.Main;

import java.nio.file.Path;

/** Runs the bundle standalone on camel-main. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) throws Exception {
        // read from the environment alone and before anything logs: an unknown log format would leave no log output
        try {
            EnumeratedSettings.requireKnownLogFormat(System::getenv);
            EnvironmentNames.refuseRenamed(System::getenv);
        } catch (ConfigurationException e) {
            exitOnConfigurationError(e);
        }
        // no main class: camel-main would scan its package for RouteBuilders, which application.properties names
        Main main = new Main();
        // the application.properties in the working directory (the project folder under ./run.sh) overrides the copy
        // in the jar: Camel looks a key up in the locations in the order given and takes the first it finds
        main.setPropertyPlaceholderLocations(
                "file:application.properties;optional=true,classpath:application.properties;optional=true");
        // a default, not a key of application.properties: there it would also override the files `camel run` is given
        // (CAMEL_MAIN_ROUTESINCLUDEPATTERN, as ./run.sh sets it, still overrides this)
        main.configure().setRoutesIncludePattern("classpath:routes/*.camel.yaml");
        // sandbox or the user's own run: decided once the effective configuration is known (RunMode)
        main.addMainListener(new RunMode(System::getenv, Path.of("")));
        try {
            main.run(args);
        } catch (Exception e) {
            exitOnConfigurationError(e);
            throw e;
        }
        System.exit(main.getExitCode());
    }

    private static void exitOnConfigurationError(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConfigurationException) {
                System.err.println("metakit-inbox: " + t.getMessage());
                System.exit(2);
            }
        }
    }
}
