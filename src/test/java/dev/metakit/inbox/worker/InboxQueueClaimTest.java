package dev.metakit.inbox.worker;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class InboxQueueClaimTest {

    @BeforeEach
    void clean() {
        TestDatabase.truncateAll();
    }

    @Test
    void aRowWithAnEventButNoAccountIsClaimedWithoutAnAccountNotAsAccountZero() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body) values"
                    + " ('k1', 'position.opened', null, 'x'), ('k2', 'position.opened', 7, 'y')");
        }
        List<InboxRow> rows = new InboxQueue(TestDatabase.dataSource()).claim("test", 10, Duration.ofSeconds(30));
        assertThat(rows).extracting(InboxRow::key, InboxRow::accountId)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("k1", null),
                        org.assertj.core.groups.Tuple.tuple("k2", 7L));
    }
}
