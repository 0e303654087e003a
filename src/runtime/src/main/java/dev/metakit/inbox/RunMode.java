package dev.metakit.inbox;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.config.EnvironmentNames;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListener;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.spi.PropertiesComponent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Decides, from the effective configuration, whether this run is the sandbox or the user's own, and then hands the
 * lifecycle to that run's listener ({@link SandboxRun} or {@link DevRunBanner}). The decision waits for camel-main's
 * {@code beforeConfigure}: the properties component then knows every location (the jar's application.properties, the
 * one beside it, {@code -D} and environment overrides), and no bean has been created yet.
 *
 * <p>Sandbox mode only when it is asked for ({@code metakit.dev-mode}, which ./run.sh sets without
 * {@code METAKIT_WEBHOOK_SECRET} in the environment) and none of the user's own settings is configured
 * ({@link UsersOwnSettings}). When one is, the run is the user's, with their settings, and one line says why there
 * is no sandbox.
 */
final class RunMode extends MainListenerSupport {
    private final Function<String, String> env;
    private final Path workingDirectory;
    private MainListener run = new DevRunBanner();

    RunMode(Function<String, String> env, Path workingDirectory) {
        this.env = env;
        this.workingDirectory = workingDirectory;
    }

    @Override
    public void beforeConfigure(BaseMainSupport main) {
        PropertiesComponent properties = main.getCamelContext().getPropertiesComponent();
        Function<String, Optional<String>> resolve = properties::resolveProperty;
        EnumeratedSettings.requireKnownValues(resolve);
        SandboxRun sandbox = decide(resolve);
        if (sandbox != null) {
            sandbox.overrides().forEach(properties::addOverrideProperty);
            requireInForce(sandbox.overrides(), resolve);
            run = sandbox;
        }
    }

    /**
     * Camel reads an environment variable derived from a key ({@code METAKIT_DATABASE_EMBEDDED_DIR} for
     * {@code metakit.database.embedded-dir}) before any override property: such a variable would take the sandbox off
     * its own database, so startup stops and names it.
     */
    private void requireInForce(java.util.Map<String, String> overrides, Function<String, Optional<String>> resolve) {
        overrides.forEach((key, value) -> {
            String effective = resolve.apply(key).orElse("");
            if (!effective.equals(value)) {
                String variable = EnvironmentNames.derived(key);
                throw new ConfigurationException("sandbox mode needs its own " + key + ", but " + variable
                        + " overrides it: unset " + variable + " (or configure your own run)");
            }
        });
    }

    /** The sandbox run to prepare, or null for the user's own run. */
    SandboxRun decide(Function<String, Optional<String>> resolve) {
        if (!Boolean.parseBoolean(resolve.apply("metakit.dev-mode").map(String::trim).orElse("false"))) {
            return null;
        }
        List<String> configured = UsersOwnSettings.configured(resolve, env);
        if (!configured.isEmpty()) {
            System.out.println("metakit-inbox: no sandbox mode, this run uses your settings: "
                    + String.join(", ", configured) + " configured");
            return null;
        }
        SandboxDatabase database = new SandboxDatabase(workingDirectory);
        resolve.apply("metakit.database.embedded-dir").map(String::trim).filter(dir -> !dir.isEmpty())
                .filter(dir -> sameDirectory(workingDirectory.resolve(dir), database.directory()))
                .ifPresent(dir -> {
                    throw new ConfigurationException("metakit.database.embedded-dir is " + dir + ", the sandbox's own"
                            + " database, which sandbox mode recreates empty: choose another directory");
                });
        try {
            return SandboxRun.prepare(resolve, env, database);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean sameDirectory(Path a, Path b) {
        Path left = a.toAbsolutePath().normalize();
        Path right = b.toAbsolutePath().normalize();
        try {
            return left.equals(right) || Files.exists(left) && Files.exists(right) && Files.isSameFile(left, right);
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void afterConfigure(BaseMainSupport main) {
        run.afterConfigure(main);
    }

    @Override
    public void beforeStart(BaseMainSupport main) {
        run.beforeStart(main);
    }

    @Override
    public void afterStart(BaseMainSupport main) {
        run.afterStart(main);
    }

    @Override
    public void beforeStop(BaseMainSupport main) {
        run.beforeStop(main);
    }

    @Override
    public void afterStop(BaseMainSupport main) {
        run.afterStop(main);
    }
}
