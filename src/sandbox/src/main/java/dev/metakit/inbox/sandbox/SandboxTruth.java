package dev.metakit.inbox.sandbox;

import java.util.List;
import java.util.Map;

/**
 * What MetaKit knows, at one instant: the state a consumer must converge to.
 *
 * @param openPositions   account id → (ticket → open position)
 * @param closedPositions ticket → closed position with its closing deal(s)
 * @param deals           account id → every deal, in execution order
 * @param operations      trading operations performed so far (non-trade events included)
 */
public record SandboxTruth(Map<Long, Map<Long, Position>> openPositions, Map<Long, ClosedPosition> closedPositions,
                           Map<Long, List<Deal>> deals, long operations) {

    public Map<Long, Position> openPositions(long accountId) {
        return openPositions.getOrDefault(accountId, Map.of());
    }
}
