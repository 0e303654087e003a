package dev.metakit.inbox.worker;

import dev.metakit.inbox.reconcile.Hint;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class AccountWorkTest {

    @Test
    void aFailureLineNamesTheAccountAndTheTicketsItsDeliveriesNamed() {
        AccountWork work = new AccountWork(2, List.of(), List.of(new Hint(78, "position.closed", null),
                new Hint(77, "position.opened", null), new Hint(78, "position.modified", null)));
        assertThat(work.about()).isEqualTo("account 2, tickets [77, 78]");
    }

    @Test
    void withoutTicketsTheLineNamesTheAccountOnly() {
        assertThat(new AccountWork(5, List.of(), List.of()).about()).isEqualTo("account 5");
    }
}
