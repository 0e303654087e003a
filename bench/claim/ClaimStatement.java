import java.lang.reflect.Field;

/**
 * Prints the worker's claim statement of the build on the class path (InboxClaims' CLAIM) with literal values in
 * place of its parameters: a 5 s liveness bound, the walk from the first account, no busy account, {@code accounts}
 * accounts, at most 5,000 rows, a 5 min lease. Run as a single-file program: java -cp CLASSES ClaimStatement.java N
 */
public class ClaimStatement {
    public static void main(String[] args) throws Exception {
        String accounts = args.length > 0 ? args[0] : "100";
        Field claim = Class.forName("dev.metakit.inbox.inbox.InboxClaims").getDeclaredField("CLAIM");
        claim.setAccessible(true);
        String[] values = {"'5 seconds'", "0", "'{}'::bigint[]", accounts, "5000", "5000", accounts, "'bench'",
                "'00000000-0000-0000-0000-000000000001'::uuid", "'5 minutes'"};
        StringBuilder out = new StringBuilder();
        int next = 0;
        for (char c : ((String) claim.get(null)).toCharArray()) {
            if (c == '?') {
                out.append(values[next++]);
            } else {
                out.append(c);
            }
        }
        if (next != values.length) {
            throw new IllegalStateException("the claim has " + next + " parameters, not " + values.length);
        }
        System.out.println(out);
    }
}
