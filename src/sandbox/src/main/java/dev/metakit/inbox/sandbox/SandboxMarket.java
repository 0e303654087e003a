package dev.metakit.inbox.sandbox;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The trading side of the sandbox: accounts 1..N with positions that open, change stops, close partly or fully.
 * Every random choice comes from one seeded {@link Random}, so one seed (and one clock) gives exactly the same run.
 * All state changes are serialised on this object; listeners are told of each event in operation order.
 */
public final class SandboxMarket {
    public static final List<String> SYMBOLS = List.of("EURUSD", "GBPUSD", "AUDUSD", "USDCHF");
    private static final int PRICE_SCALE = 5;
    private static final BigDecimal LOT = new BigDecimal("0.01");
    private static final BigDecimal CONTRACT_SIZE = new BigDecimal("100000");
    private static final BigDecimal COMMISSION_PER_LOT = new BigDecimal("-3.50");
    private static final BigDecimal PIP = new BigDecimal("0.0001");
    private static final BigDecimal MONEY_ZERO = new BigDecimal("0.00");
    private static final int MAX_OPEN_PER_ACCOUNT = 8;

    private final Random random;
    private final Clock clock;
    private final int accounts;
    private final Map<Long, TreeMap<Long, Position>> open = new LinkedHashMap<>();
    private final Map<Long, List<Deal>> deals = new LinkedHashMap<>();
    private final Map<Long, List<Deal>> outDeals = new LinkedHashMap<>();
    private final Map<Long, ClosedPosition> closed = new LinkedHashMap<>();
    private final Map<String, BigDecimal> prices = new LinkedHashMap<>();
    private final List<Consumer<SandboxEvent>> listeners = new CopyOnWriteArrayList<>();
    private long nextOrder = 99_300_000L;
    private long nextDeal = 88_100_000L;
    private long operations;

    public SandboxMarket(long seed, int accounts) {
        this(seed, accounts, Clock.systemUTC());
    }

    public SandboxMarket(long seed, int accounts, Clock clock) {
        if (accounts < 1) {
            throw new IllegalArgumentException("accounts must be at least 1, was " + accounts);
        }
        this.random = new Random(seed);
        this.clock = clock;
        this.accounts = accounts;
        for (long id = 1; id <= accounts; id++) {
            open.put(id, new TreeMap<>());
            deals.put(id, new ArrayList<>());
        }
        prices.put("EURUSD", new BigDecimal("1.08450"));
        prices.put("GBPUSD", new BigDecimal("1.27120"));
        prices.put("AUDUSD", new BigDecimal("0.65830"));
        prices.put("USDCHF", new BigDecimal("0.88210"));
    }

    /** Called, in operation order and while the market is locked, with every event an operation emits. */
    public void onEvent(Consumer<SandboxEvent> listener) {
        listeners.add(listener);
    }

    public int accounts() {
        return accounts;
    }

    public boolean hasAccount(long accountId) {
        return open.containsKey(accountId);
    }

    /** One random operation on a random account: mostly opens and closes, some stop changes, a few connects. */
    public synchronized SandboxEvent randomOperation() {
        long account = 1 + random.nextInt(accounts);
        TreeMap<Long, Position> positions = open.get(account);
        int roll = random.nextInt(100);
        if (roll < 4) {
            return connect(account);
        }
        if (positions.isEmpty() || (roll < 40 && positions.size() < MAX_OPEN_PER_ACCOUNT)) {
            return openRandom(account);
        }
        List<Long> tickets = new ArrayList<>(positions.keySet());
        Position position = positions.get(tickets.get(random.nextInt(tickets.size())));
        if (roll < 65) {
            BigDecimal price = drift(position.symbol());
            return modify(position.ticket(), randomStop(position.type(), price, true),
                    randomStop(position.type(), price, false));
        }
        if (roll < 80 && position.volume().compareTo(LOT) > 0) {
            int lots = position.volume().divide(LOT).intValueExact();
            return partialClose(position.ticket(), LOT.multiply(BigDecimal.valueOf(1 + random.nextInt(lots - 1))));
        }
        return close(position.ticket());
    }

    private SandboxEvent openRandom(long account) {
        String symbol = SYMBOLS.get(random.nextInt(SYMBOLS.size()));
        String type = random.nextBoolean() ? "buy" : "sell";
        BigDecimal volume = LOT.multiply(BigDecimal.valueOf(1 + random.nextInt(100)));
        BigDecimal price = drift(symbol);
        return open(account, symbol, type, volume, randomStop(type, price, true), randomStop(type, price, false));
    }

    /** Opens a position at the symbol's current price: an {@code in} deal and a {@code position.opened} event. */
    public synchronized SandboxEvent open(long accountId, String symbol, String type, BigDecimal volume,
                                          BigDecimal sl, BigDecimal tp) {
        TreeMap<Long, Position> positions = account(accountId);
        requireSide(type);
        Instant now = now();
        long ticket = nextOrder++;
        BigDecimal price = price(symbol);
        Position position = new Position(accountId, ticket, symbol, type, volume.setScale(2, RoundingMode.UNNECESSARY),
                price, sl, tp, now);
        positions.put(ticket, position);
        record(new Deal(accountId, nextDeal++, ticket, ticket, symbol, type, "in", position.volume(), price,
                MONEY_ZERO, commission(position.volume()), MONEY_ZERO, now));
        return emit(SandboxEvent.POSITION_OPENED, position);
    }

    /** Sets new stops (0 means none): a {@code position.modified} event, no deal. */
    public synchronized SandboxEvent modify(long ticket, BigDecimal sl, BigDecimal tp) {
        Position position = position(ticket).withStops(sl, tp);
        open.get(position.accountId()).put(ticket, position);
        return emit(SandboxEvent.POSITION_MODIFIED, position);
    }

    /** Closes part of the volume with an {@code out} deal; the position stays open, a {@code position.modified}. */
    public synchronized SandboxEvent partialClose(long ticket, BigDecimal volume) {
        Position position = position(ticket);
        if (volume.signum() <= 0 || volume.compareTo(position.volume()) >= 0) {
            throw new IllegalArgumentException("partial close of " + volume.toPlainString() + " on a position of "
                    + position.volume().toPlainString() + " lots");
        }
        closeDeal(position, volume);
        Position reduced = position.withVolume(position.volume().subtract(volume));
        open.get(position.accountId()).put(ticket, reduced);
        return emit(SandboxEvent.POSITION_MODIFIED, reduced);
    }

    /** Closes the remaining volume with an {@code out} deal; the position leaves the list, a {@code position.closed}. */
    public synchronized SandboxEvent close(long ticket) {
        Position position = position(ticket);
        Deal deal = closeDeal(position, position.volume());
        open.get(position.accountId()).remove(ticket);
        List<Deal> outs = outDeals.remove(ticket);
        closed.put(ticket, new ClosedPosition(position.accountId(), ticket, position.symbol(), position.type(),
                outs == null ? List.of(deal) : outs));
        return emit(SandboxEvent.POSITION_CLOSED, position);
    }

    /** A non-trade event: valid, acknowledged, and a trigger for nothing. */
    public synchronized SandboxEvent connect(long accountId) {
        account(accountId);
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("server", "MetaKit-Demo");
        data.put("login", accountId);
        return emit(new SandboxEvent(SandboxEvent.ACCOUNT_CONNECTED, accountId, now(), data));
    }

    public synchronized List<Position> positions(long accountId) {
        return List.copyOf(account(accountId).values());
    }

    /** The positions endpoint's body elements, with the floating profit at the current price. */
    synchronized List<Map<String, Object>> positionsJson(long accountId) {
        List<Map<String, Object>> json = new ArrayList<>();
        for (Position p : account(accountId).values()) {
            json.add(p.toJson(profit(p, p.volume(), prices.get(p.symbol())), MONEY_ZERO));
        }
        return json;
    }

    /** Deals whose time lies in [from, to]; either bound may be null. */
    public synchronized List<Deal> deals(long accountId, Instant from, Instant to) {
        account(accountId);
        return deals.get(accountId).stream()
                .filter(d -> from == null || !d.time().isBefore(from))
                .filter(d -> to == null || !d.time().isAfter(to))
                .toList();
    }

    public synchronized long operations() {
        return operations;
    }

    public synchronized SandboxTruth truth() {
        Map<Long, Map<Long, Position>> openCopy = new LinkedHashMap<>();
        open.forEach((account, positions) -> openCopy.put(account, Collections.unmodifiableMap(new TreeMap<>(positions))));
        Map<Long, List<Deal>> dealsCopy = new LinkedHashMap<>();
        deals.forEach((account, list) -> dealsCopy.put(account, List.copyOf(list)));
        return new SandboxTruth(Collections.unmodifiableMap(openCopy),
                Collections.unmodifiableMap(new LinkedHashMap<>(closed)), Collections.unmodifiableMap(dealsCopy),
                operations);
    }

    private Deal closeDeal(Position position, BigDecimal volume) {
        BigDecimal price = drift(position.symbol());
        Deal deal = new Deal(position.accountId(), nextDeal++, position.ticket(), nextOrder++, position.symbol(),
                opposite(position.type()), "out", volume, price, profit(position, volume, price), commission(volume),
                MONEY_ZERO, now());
        record(deal);
        outDeals.computeIfAbsent(position.ticket(), t -> new ArrayList<>()).add(deal);
        return deal;
    }

    private void record(Deal deal) {
        deals.get(deal.accountId()).add(deal);
    }

    private SandboxEvent emit(String event, Position position) {
        return emit(new SandboxEvent(event, position.accountId(), now(), position.eventData()));
    }

    private SandboxEvent emit(SandboxEvent event) {
        operations++;
        for (Consumer<SandboxEvent> listener : listeners) {
            listener.accept(event);
        }
        return event;
    }

    private TreeMap<Long, Position> account(long accountId) {
        TreeMap<Long, Position> positions = open.get(accountId);
        if (positions == null) {
            throw new NoSuchElementException("no account " + accountId);
        }
        return positions;
    }

    private Position position(long ticket) {
        for (TreeMap<Long, Position> positions : open.values()) {
            Position position = positions.get(ticket);
            if (position != null) {
                return position;
            }
        }
        throw new NoSuchElementException("no open position " + ticket);
    }

    private BigDecimal price(String symbol) {
        BigDecimal price = prices.get(symbol);
        if (price == null) {
            throw new IllegalArgumentException("unknown symbol " + symbol + ", known: " + SYMBOLS);
        }
        return price;
    }

    /** Moves the symbol's price by up to ±20 pips (in 0.1-pip steps) and returns the new price. */
    private BigDecimal drift(String symbol) {
        BigDecimal step = BigDecimal.valueOf(random.nextInt(401) - 200, PRICE_SCALE);
        BigDecimal next = price(symbol).add(step);
        prices.put(symbol, next);
        return next;
    }

    /** Half the time none (0), else 10..100 pips on the losing (sl) or winning (tp) side of the price. */
    private BigDecimal randomStop(String type, BigDecimal price, boolean stopLoss) {
        if (random.nextBoolean()) {
            return BigDecimal.ZERO;
        }
        BigDecimal distance = PIP.multiply(BigDecimal.valueOf(10 + random.nextInt(91)));
        boolean below = stopLoss == "buy".equals(type);
        return (below ? price.subtract(distance) : price.add(distance)).setScale(PRICE_SCALE, RoundingMode.UNNECESSARY);
    }

    private static BigDecimal profit(Position position, BigDecimal volume, BigDecimal price) {
        BigDecimal move = price.subtract(position.priceOpen());
        if ("sell".equals(position.type())) {
            move = move.negate();
        }
        return move.multiply(volume).multiply(CONTRACT_SIZE).setScale(2, RoundingMode.HALF_EVEN);
    }

    private static BigDecimal commission(BigDecimal volume) {
        return COMMISSION_PER_LOT.multiply(volume).setScale(2, RoundingMode.HALF_EVEN);
    }

    private static String opposite(String type) {
        return "buy".equals(type) ? "sell" : "buy";
    }

    private static void requireSide(String type) {
        if (!"buy".equals(type) && !"sell".equals(type)) {
            throw new IllegalArgumentException("type must be buy or sell, was " + type);
        }
    }

    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS);
    }
}
