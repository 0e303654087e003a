package dev.metakit.inbox.feed;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class FeedOrderCheckTest {

    @Test
    void nextSeqsAndRepeatsOfSeenOnesAreInOrder() {
        FeedOrderCheck check = new FeedOrderCheck();
        for (long[] c : new long[][]{{1, 1}, {2, 1}, {1, 2}, {1, 2}, {2, 2}, {1, 3}}) {
            check.accept(change(c[0], c[1]));
        }

        assertThat(check.inOrder()).isTrue();
        assertThat(check.summary()).isEqualTo("feed: 5 changes, in order: yes, 1 sent again");
    }

    @Test
    void aGapIsNotInOrder() {
        FeedOrderCheck check = new FeedOrderCheck();
        check.accept(change(1, 1));
        check.accept(change(1, 3));

        assertThat(check.inOrder()).isFalse();
        assertThat(check.summary()).isEqualTo("feed: 1 changes, in order: NO (1:3 after 1:1)");
    }

    private static FeedChange change(long account, long seq) {
        return new FeedChange(seq, account, seq, 100, "opened", "open", "EURUSD", "buy", null, null, null, null, null,
                null, null, null, null, List.of("status"), "event", null);
    }
}
