package dev.metakit.inbox;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.config.EnvironmentNames;
import dev.metakit.inbox.routefiles.RouteFileError;
import dev.metakit.inbox.routefiles.RouteFiles;
import org.apache.camel.main.Main;

import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Function;

/** Runs the bundle standalone on camel-main. */
public final class Application {
    private Application() {
    }

    public static void main(String[] args) throws Exception {
        Main main;
        try {
            main = boot(System::getenv, Path.of(""));
        } catch (ConfigurationException e) {
            exitOnConfigurationError(e);
            throw e;
        }
        try {
            main.run(args);
        } catch (Exception e) {
            exitOnConfigurationError(e);
            throw e;
        }
        System.exit(main.getExitCode());
    }

    /**
     * The camel-main that {@code java -jar} runs, configured and not yet started: the checks that stop startup before
     * anything logs, the settings files, the route files and the run mode. The tests boot the bundle through this too.
     *
     * @param env              the process environment
     * @param workingDirectory the folder whose application.properties overrides the jar's copy (the one
     *                         {@code java -jar} runs in, the project folder under ./run.sh)
     * @throws ConfigurationException for a setting that stops startup before camel-main reads any
     */
    public static Main boot(Function<String, String> env, Path workingDirectory) {
        // read from the environment alone and before anything logs: an unknown log format would leave no log output
        EnumeratedSettings.requireKnownLogFormat(env);
        EnvironmentNames.refuseRenamed(env);
        // no main class: camel-main would scan its package for RouteBuilders, which application.properties names
        Main main = new Main();
        // the application.properties in the working directory overrides the copy in the jar: Camel looks a key up in
        // the locations in the order given and takes the first it finds
        main.setPropertyPlaceholderLocations("file:" + workingDirectory.resolve("application.properties")
                + ";optional=true,classpath:application.properties;optional=true");
        // a default, not a key of application.properties: there it would also override the files `camel run` is given
        // (CAMEL_MAIN_ROUTESINCLUDEPATTERN, as ./run.sh sets it, still overrides this)
        main.configure().setRoutesIncludePattern("classpath:routes/*.camel.yaml");
        // a route file left without routes is a file left out; a save that does not load is one line (routefiles)
        main.addMainListener(new RouteFiles());
        // sandbox or the user's own run: decided once the effective configuration is known (RunMode)
        main.addMainListener(new RunMode(env, workingDirectory));
        // spans, when OpenTelemetry's own OTEL_* variables say so (StandaloneTracing)
        main.addMainListener(new StandaloneTracing(env));
        return main;
    }

    private static void exitOnConfigurationError(Throwable failure) {
        startupError(failure).ifPresent(line -> {
            System.err.println(line);
            System.exit(2);
        });
    }

    /**
     * The one line a failed start prints, for a failure that is the operator's to fix: a missing or unusable setting,
     * a route file that does not load (its line and the parser's words). Empty for any other failure (its stack trace
     * is the report).
     */
    public static Optional<String> startupError(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConfigurationException) {
                return Optional.of("metakit-inbox: " + t.getMessage());
            }
        }
        return RouteFileError.describe(failure).map(line -> "metakit-inbox: " + line
                + ". The bundle does not start on it: fix the file and start again");
    }
}
