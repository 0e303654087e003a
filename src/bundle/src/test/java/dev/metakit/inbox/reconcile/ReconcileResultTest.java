package dev.metakit.inbox.reconcile;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The words the log line and the ops page show for a reconcile, instead of the record's fields. */
class ReconcileResultTest {

    @Test
    void theFirstFigureNamesWhatItCountsAndTheOthersReadOnFromIt() {
        assertThat(new ReconcileResult(2, false, 0, 3, 1, 0).inWords()).isEqualTo("3 positions updated, 1 closed");
        assertThat(new ReconcileResult(2, false, 1, 0, 0, 2).inWords()).isEqualTo("1 position opened, 2 closing");
        assertThat(new ReconcileResult(2, false, 0, 0, 0, 1).toString()).isEqualTo("1 position closing");
    }

    @Test
    void nothingToDoAndAStaleSnapshotSaySo() {
        assertThat(new ReconcileResult(2, false, 0, 0, 0, 0).inWords()).isEqualTo("no change");
        assertThat(ReconcileResult.stale(2).toString()).isEqualTo("snapshot older than the stored one: ignored");
    }
}
