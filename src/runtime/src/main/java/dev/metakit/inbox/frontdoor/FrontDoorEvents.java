package dev.metakit.inbox.frontdoor;

/** What the front door reports for the meters: the bundle's metrics bean implements it. */
public interface FrontDoorEvents {
    /** A client hung up before its request was read whole: not our error, counted and logged at DEBUG. */
    void clientClosed();

    /**
     * The front door closed a connection itself.
     *
     * @param reason {@code slow} (request not read within the deadline), {@code connection_limit},
     *               {@code body_memory} (half-sent bodies hold the memory budget)
     */
    void connectionCut(String reason);

    FrontDoorEvents NONE = new FrontDoorEvents() {
        @Override
        public void clientClosed() {
        }

        @Override
        public void connectionCut(String reason) {
        }
    };
}
