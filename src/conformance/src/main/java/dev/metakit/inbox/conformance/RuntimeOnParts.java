package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.Sandbox;

import javax.sql.DataSource;
import java.net.URI;
import java.util.List;

/** A runtime under test that runs on {@link RuntimeParts}: its webhook, secrets and database are the parts'. */
public interface RuntimeOnParts extends RuntimeUnderTest {

    /** The parts the runtime was started on. */
    RuntimeParts parts();

    @Override
    default URI webhook() {
        return parts().webhook();
    }

    @Override
    default String webhookSecret() {
        return parts().secrets().webhookSecret();
    }

    @Override
    default List<String> secrets() {
        return parts().secrets().all();
    }

    @Override
    default Sandbox metakit() {
        return parts().sandbox();
    }

    @Override
    default DataSource database() {
        return parts().postgres().dataSource();
    }

    @Override
    default void stopDatabase() throws Exception {
        parts().postgres().stop();
    }

    @Override
    default void startDatabase() throws Exception {
        parts().postgres().start();
    }
}
