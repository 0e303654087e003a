package dev.metakit.inbox.quarkus.deployment;

import dev.metakit.inbox.quarkus.MetakitInboxRoutes;
import dev.metakit.inbox.quarkus.MetakitInboxSetup;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.FeatureBuildItem;

/** What Quarkus does with the extension while it builds a host: names the feature and adds the extension's beans. */
class MetakitInboxProcessor {
    static final String FEATURE = "metakit-inbox";

    @BuildStep
    void feature(MetakitInboxBuildTimeConfig config, BuildProducer<FeatureBuildItem> feature) {
        if (config.enabled()) {
            feature.produce(new FeatureBuildItem(FEATURE));
        }
    }

    /**
     * The runtime module's beans: the RouteBuilder's producer and the startup observer (its jar has no bean index),
     * through which everything of the bundle comes; none with {@code quarkus.metakit-inbox.enabled=false}.
     */
    @BuildStep
    void beans(MetakitInboxBuildTimeConfig config, BuildProducer<AdditionalBeanBuildItem> beans) {
        if (config.enabled()) {
            beans.produce(AdditionalBeanBuildItem.builder()
                    .addBeanClasses(MetakitInboxRoutes.class, MetakitInboxSetup.class)
                    .setUnremovable()
                    .build());
        }
    }
}
