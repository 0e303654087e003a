package dev.metakit.inbox.db;

import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The bundle's connection settings fill in what the database URL leaves out; what the URL sets, it keeps. */
class ConnectionDefaultsTest {

    @Test
    void aUrlWithoutTimeoutsGetsTheBundlesOnes() {
        PGSimpleDataSource server = server("jdbc:postgresql://db1:5432,db2:5432/inbox?targetServerType=primary");
        assertThat(server.getConnectTimeout()).isEqualTo(InboxDatabase.CONNECT_TIMEOUT_SECONDS);
        assertThat(server.getSocketTimeout()).isEqualTo(InboxDatabase.SOCKET_TIMEOUT_SECONDS);
        assertThat(server.getTcpKeepAlive()).isTrue();
        assertThat(server.getTargetServerType()).isEqualTo("primary");
        assertThat(server.getOptions())
                .isEqualTo("-c idle_in_transaction_session_timeout=" + InboxDatabase.IDLE_IN_TRANSACTION_SECONDS + "s");
    }

    @Test
    void timeoutsTheUrlSetsWinOverTheBundlesOnes() {
        PGSimpleDataSource server = server(
                "jdbc:postgresql://db1:5432,db2:5432/inbox?connectTimeout=5&socketTimeout=12&tcpKeepAlive=false");
        assertThat(server.getConnectTimeout()).isEqualTo(5);
        assertThat(server.getSocketTimeout()).isEqualTo(12);
        assertThat(server.getTcpKeepAlive()).isFalse();
    }

    @Test
    void theEmbeddedDatabaseGetsTheBundlesOnes() {
        PGSimpleDataSource server = new PGSimpleDataSource();
        InboxDatabase.applyConnectionDefaults(server, null);
        assertThat(server.getSocketTimeout()).isEqualTo(InboxDatabase.SOCKET_TIMEOUT_SECONDS);
    }

    private static PGSimpleDataSource server(String url) {
        PGSimpleDataSource server = new PGSimpleDataSource();
        server.setUrl(url);
        InboxDatabase.applyConnectionDefaults(server, url);
        return server;
    }
}
