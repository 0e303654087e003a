package dev.metakit.inbox.quarkus.deployment;

import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** The extension's build-time settings. */
@ConfigMapping(prefix = "quarkus.metakit-inbox")
@ConfigRoot(phase = ConfigPhase.BUILD_TIME)
public interface MetakitInboxBuildTimeConfig {
    /**
     * Whether the bundle is a part of the application. With {@code false} the extension adds nothing to it: no route
     * of the bundle, no defaults, no DataSource, health check or meter, and none of its settings is required.
     */
    @WithDefault("true")
    boolean enabled();
}
