package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.EnvironmentNames;
import dev.metakit.inbox.db.DatabaseSettings;
import dev.metakit.inbox.db.InboxSchema;
import dev.metakit.inbox.feed.FeedMaintenance;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.PrintStream;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;

/**
 * Operators' command line against the bundle's database ({@code METAKIT_DATABASE_URL}, {@code METAKIT_DATABASE_USER},
 * {@code METAKIT_DATABASE_PASSWORD} or their aliases {@code DATABASE_URL}, ..., and {@code METAKIT_DATABASE_SCHEMA}, as
 * the bundle reads them: {@link EnvironmentNames}). The running bundle's worker does the work within a poll.
 *
 * <pre>
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand replay --account 2 --from 2026-12-01T00:00:00Z --to 2026-12-02T00:00:00Z
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand replay --all
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand requeue-failed [--account 2]
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand prune --older-than P7D
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand feed-replay --account 2 --from-seq 40
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand feed-replay --since 2026-12-01T00:00:00Z
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand rotate-secret
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand store-secret
 * java -cp target/metakit-inbox.jar dev.metakit.inbox.ops.InboxCommand forget-secret
 * </pre>
 */
public final class InboxCommand {
    static final String USAGE = """
            usage: InboxCommand replay (--account ID | --from INSTANT | --to INSTANT)... | replay --all
                   InboxCommand requeue-failed [--account ID]
                   InboxCommand prune [--older-than DURATION]   (default P7D, at least P1D; failed rows are kept)
                   InboxCommand feed-replay --account ID --from-seq SEQ | feed-replay --since INSTANT
                     (publishes the change feed's retained changes again, with their ids, in order per account)
                   InboxCommand rotate-secret   (MetaKit issues a new webhook secret; it is stored for every instance)
                   InboxCommand store-secret    (stores METAKIT_WEBHOOK_SECRET in the database, once, to rotate it later)
                   InboxCommand forget-secret   (deletes the stored secret: back to METAKIT_WEBHOOK_SECRET alone)
              INSTANT is ISO-8601 UTC (2026-12-01T00:00:00Z); --from is inclusive, --to exclusive (received_at).
              The database is METAKIT_DATABASE_URL (jdbc:postgresql://... or postgres://user:pass@host/db),
              METAKIT_DATABASE_USER and METAKIT_DATABASE_PASSWORD, or their aliases DATABASE_URL, DATABASE_USER and
              DATABASE_PASSWORD, as the bundle reads them; its tables in METAKIT_DATABASE_SCHEMA (default metakit). The
              secret commands also read METAKIT_WEBHOOK_SECRET_KEY, METAKIT_WEBHOOK_ID, METAKIT_API_URL and
              METAKIT_API_KEY (docs/operations.md "Rotating the webhook secret").""";

    private InboxCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    /** @return the exit code: 0 done, 2 usage or configuration error, 1 database error */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println(USAGE);
            return 2;
        }
        Long account = null;
        Instant from = null;
        Instant to = null;
        boolean all = false;
        String olderThan = "P7D";
        Long fromSeq = null;
        Instant since = null;
        try {
            for (int i = 1; i < args.length; i++) {
                switch (args[i]) {
                    case "--account" -> account = number(args, ++i);
                    case "--from" -> from = instant(args, ++i);
                    case "--to" -> to = instant(args, ++i);
                    case "--all" -> all = true;
                    case "--older-than" -> olderThan = value(args, ++i);
                    case "--from-seq" -> fromSeq = number(args, ++i);
                    case "--since" -> since = instant(args, ++i);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
        } catch (IllegalArgumentException e) {
            err.println("InboxCommand: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        String url = EnvironmentNames.read("metakit.database.url", env::get).orElse(null);
        if (url == null) {
            err.println("InboxCommand: METAKIT_DATABASE_URL (or DATABASE_URL) is required: the database of the"
                    + " running bundle");
            return 2;
        }
        try {
            PGSimpleDataSource db = dataSource(url, env);
            InboxMaintenance maintenance = new InboxMaintenance(db);
            switch (args[0]) {
                case "replay" -> {
                    if (!all && account == null && from == null && to == null) {
                        err.println("InboxCommand: replay needs --account, --from or --to (or --all for everything)\n"
                                + USAGE);
                        return 2;
                    }
                    out.println("replayed " + maintenance.replayReceived(account, from, to) + " deliveries");
                }
                case "requeue-failed" -> out.println("requeued " + (account == null ? maintenance.requeueFailed()
                        : maintenance.requeueFailedOfAccount(account)) + " failed rows");
                case "prune" -> {
                    InboxRetention settings = new InboxRetention();
                    settings.setRetention(olderThan);
                    out.println("pruned " + maintenance.prune(settings.getRetention(), 5000) + " processed rows");
                }
                case "feed-replay" -> {
                    FeedMaintenance feed = new FeedMaintenance(db);
                    if (account != null && fromSeq != null && since == null) {
                        out.println("marked " + feed.replayAccount(account, fromSeq) + " changes for publishing again");
                    } else if (since != null && account == null && fromSeq == null) {
                        out.println("marked " + feed.replayReconciledSince(since) + " changes for publishing again");
                    } else {
                        err.println("InboxCommand: feed-replay needs --account with --from-seq, or --since alone\n"
                                + USAGE);
                        return 2;
                    }
                }
                case "rotate-secret", "store-secret", "forget-secret" -> {
                    return SecretCommands.run(args[0], db, env, out, err);
                }
                default -> {
                    err.println("InboxCommand: unknown command " + args[0] + "\n" + USAGE);
                    return 2;
                }
            }
            return 0;
        } catch (dev.metakit.inbox.config.ConfigurationException | IllegalArgumentException e) {
            err.println("InboxCommand: " + e.getMessage());
            return 2;
        } catch (java.sql.SQLException e) {
            err.println("InboxCommand: database error: " + e.getMessage());
            return 1;
        }
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    // the option's own words, not the parser's ("For input string", "could not be parsed at index 7")
    private static long number(String[] args, int i) {
        String v = value(args, i);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(args[i - 1] + " needs a whole number, got '" + v + "'");
        }
    }

    private static Instant instant(String[] args, int i) {
        String v = value(args, i);
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(args[i - 1] + " needs an ISO-8601 UTC instant such as"
                    + " 2026-12-01T00:00:00Z, got '" + v + "'");
        }
    }

    private static PGSimpleDataSource dataSource(String url, Map<String, String> env) {
        DatabaseSettings settings = DatabaseSettings.parse(url,
                EnvironmentNames.read("metakit.database.user", env::get).orElse(null),
                EnvironmentNames.read("metakit.database.password", env::get).orElse(null));
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(settings.jdbcUrl());
        ds.setUser(settings.user());
        ds.setPassword(settings.password());
        // the bundle's tables, in its schema (METAKIT_DATABASE_SCHEMA, as the bundle reads it)
        ds.setCurrentSchema(InboxSchema.of(EnvironmentNames.read("metakit.database.schema", env::get).orElse(null))
                .name());
        return ds;
    }
}
