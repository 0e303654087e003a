package dev.metakit.inbox.config;

import dev.metakit.inbox.db.InboxDatabase;
import dev.metakit.inbox.feed.ChangePublisher;
import dev.metakit.inbox.ops.InboxRetention;
import dev.metakit.inbox.ops.OpsPage;
import dev.metakit.inbox.worker.InboxWorker;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A setting's default lives in application.properties only: a bean started without the value names the key. */
class UnsetSettingsTest {

    @Test
    void aBeanStartedWithoutASettingNamesItsPropertyKey() {
        assertThatThrownBy(new InboxWorker()::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("metakit.trade-events");
        assertThatThrownBy(new InboxDatabase()::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("metakit.database.pool-size");
        assertThatThrownBy(new OpsPage()::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("metakit.ops.enabled");
        assertThatThrownBy(new ChangePublisher()::start).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("metakit.feed.concurrency");
        assertThatThrownBy(new InboxRetention()::prune).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("metakit.retention");
    }
}
