package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.secret.RotationRig;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import java.io.File;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The ops page: off by default, token-protected, and working in a real headless Chromium. */
class OpsPageTest {
    static final String TOKEN = "ops-token-0123456789abcdef";
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();
    private RunningInbox inbox;
    private final HttpClient http = HttpClient.newHttpClient();

    private void startInbox(Map<String, String> extra) {
        Map<String, String> p = new HashMap<>(extra);
        p.putIfAbsent("metakit.worker.max-attempts", "1");
        inbox = fixture.start(p);
    }

    private HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(inbox.managementUri(path)).GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void byDefaultThereIsNoPage() throws Exception {
        startInbox(Map.of());
        assertThat(get("/ops", null).statusCode()).isEqualTo(404);
        assertThat(get("/ops/api/summary", TOKEN).statusCode()).isEqualTo(404);
    }

    @Test
    void enabledWithoutATokenStopsStartup() {
        assertThatThrownBy(() -> startInbox(Map.of("metakit.ops.enabled", "true", "metakit.ops.token", "short")))
                .satisfies(e -> {
                    Throwable t = e;
                    while (t != null && !(t instanceof ConfigurationException)) {
                        t = t.getCause();
                    }
                    assertThat(t).isNotNull();
                    assertThat(t.getMessage()).contains("METAKIT_OPS_TOKEN");
                });
    }

    @Test
    void theApiWantsTheToken() throws Exception {
        startInbox(Map.of("metakit.ops.enabled", "true", "metakit.ops.token", TOKEN));
        assertThat(get("/ops", null).statusCode()).isEqualTo(200);
        assertThat(get("/ops/api/summary", null).statusCode()).isEqualTo(401);
        assertThat(get("/ops/api/summary", TOKEN + "x").statusCode()).isEqualTo(401);
        HttpResponse<String> summary = get("/ops/api/summary", TOKEN);
        assertThat(summary.statusCode()).isEqualTo(200);
        assertThat(summary.body()).contains("\"backlog\":0", "\"failedRows\":[]");
    }

    @Test
    void theFeedsLagAndLastChangeShowAndItsReplayMarksChangesForPublishingAgain() throws Exception {
        startInbox(Map.of("metakit.ops.enabled", "true", "metakit.ops.token", TOKEN));
        metakit.open(2, 20, "0.10", "0", "0", fixture.t0());
        inbox.postSigned(TestEvents.event("position.opened", 2, 20), "position.opened");
        await().atMost(Duration.ofSeconds(20)).until(() -> scalar(
                "select count(*) from position_changes where published_at is not null") == 1);

        HttpResponse<String> summary = get("/ops/api/summary", TOKEN);
        assertThat(summary.body()).contains("\"feed\":{\"lagSeconds\":0,\"unpublished\":0}",
                "\"lastChangeSeq\":1", "\"lastChangeKind\":\"opened\"");
        HttpResponse<String> replay = http.send(HttpRequest.newBuilder(
                        inbox.managementUri("/ops/api/feed/replay?account=2&fromSeq=1"))
                .header("Authorization", "Bearer " + TOKEN).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(replay.statusCode()).isEqualTo(200);
        assertThat(replay.body()).contains("\"replayed\":1");
        // the publisher sends it again: published once more
        await().atMost(Duration.ofSeconds(20)).until(() -> scalar(
                "select count(*) from position_changes where published_at is null") == 0);
    }

    @Test
    void inHeadlessChromiumThePageLoadsAndRequeueAndReconcileNowWork() throws Exception {
        assumeChromium();

        metakit.open(2, 20, "0.10", "0", "0", fixture.t0());
        metakit.webhooks("[{\"id\":\"wh_1\",\"url\":\"https://x/hooks\",\"lastDeliveryStatus\":\"succeeded\","
                + "\"lastDeliveryAt\":\"" + fixture.t0() + "\"}]");
        startInbox(Map.of("metakit.ops.enabled", "true", "metakit.ops.token", TOKEN, "metakit.status.interval", "1s"));
        inbox.postSigned(TestEvents.event("position.opened", 2, 20), "position.opened");
        await().atMost(Duration.ofSeconds(15)).until(() -> scalar(
                "select count(*) from webhook_inbox where processed_at is not null") == 1);
        // account 5 is unknown to MetaKit yet (404) and max attempts is 1: one failed row to requeue
        inbox.postSigned(TestEvents.event("position.opened", 5, 50), "position.opened");
        await().atMost(Duration.ofSeconds(15)).until(() -> scalar(
                "select count(*) from webhook_inbox where failed_at is not null") == 1);
        await().atMost(Duration.ofSeconds(15)).until(() -> scalar("select count(*) from webhook_endpoints") == 1);
        String failedKey = failedKey();

        WebDriver browser = headlessChromium();
        try {
            browser.get(inbox.managementUri("/ops") + "#token=" + TOKEN);
            onPage().until(() ->
                    "true".equals(browser.findElement(By.tagName("body")).getAttribute("data-loaded")));
            assertThat(browser.getCurrentUrl()).as("the token leaves the address bar").doesNotContain(TOKEN);
            assertThat(textOf(browser, By.id("failed"))).isEqualTo("1");
            assertThat(textOf(browser, By.id("endpoints"))).contains("wh_1", "succeeded");
            assertThat(textOf(browser, By.id("accounts"))).contains("2", "5");
            assertThat(read(() -> browser.findElements(By.cssSelector("#chart rect")).size())).isEqualTo(120);
            theChartHasATimeAxisAndAScale(browser);

            // requeue: MetaKit knows account 5 now, so the row is processed this time
            metakit.account(5);
            click(browser, By.id("requeue-" + failedKey.replaceAll("[^A-Za-z0-9_-]", "_")));
            onPage().until(() ->
                    browser.findElement(By.id("message")).getText().contains("requeued 1 row"));
            await().atMost(Duration.ofSeconds(15)).until(() -> scalar(
                    "select count(*) from webhook_inbox where failed_at is null and processed_at is not null") == 2);
            // the page's reload after the requeue empties the failed rows' table, which moves the accounts' buttons
            // up: a click aimed at the layout before it lands wherever the new layout puts that point
            onPage().until(() -> "0".equals(browser.findElement(By.id("failed")).getText()));

            // reconcile now: a position MetaKit opened since shows up without any delivery
            metakit.open(2, 21, "0.30", "0", "0", fixture.t0());
            click(browser, By.id("reconcile-2"));
            onPage().until(() ->
                    browser.findElement(By.id("message")).getText().contains("account 2 reconciled"));
            assertThat(textOf(browser, By.id("message"))).as("the result in words, not a Java record")
                    .isEqualTo("account 2 reconciled: 1 position opened");
            assertThat(scalar("select count(*) from positions where account_id = 2 and status = 'open'")).isEqualTo(2);
            onPage().until(() ->
                    browser.findElement(By.cssSelector("#accounts tbody tr:first-child")).getText().contains("2 2"));

            byte[] png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
            Path shot = RunningInbox.basedir().resolve("target").resolve("ops-page.png");
            Files.createDirectories(shot.getParent());
            Files.write(shot, png);
            System.out.println("OPS PAGE SCREENSHOT: " + shot);
            assertThat(png.length).isGreaterThan(1000);
        } finally {
            browser.quit();
        }
    }

    @Test
    void inHeadlessChromiumTheRotateButtonRotatesTheWebhookSecretAndThePageShowsNoSecret() throws Exception {
        assumeChromium();
        try (RotationRig rig = new RotationRig("http://127.0.0.1:9/hooks/metakit", Duration.ofMinutes(5), 0)) {
            rig.storeFirstSecret();
            Map<String, String> settings = rig.settings(RunningInbox.freePort());
            settings.put("metakit.ops.token", TOKEN);
            RunningInbox rotating = rig.start(settings);

            WebDriver browser = headlessChromium();
            try {
                browser.get(rotating.managementUri("/ops") + "#token=" + TOKEN);
                onPage().until(() ->
                        "true".equals(browser.findElement(By.tagName("body")).getAttribute("data-loaded")));
                assertThat(textOf(browser, By.id("webhook-secret"))).contains("source database",
                        "generation 1");

                click(browser, By.id("rotate-secret"));
                browser.switchTo().alert().accept();
                onPage().until(() ->
                        browser.findElement(By.id("message")).getText().startsWith("rotated: generation 2"));
                onPage().until(() ->
                        browser.findElement(By.id("webhook-secret")).getText().contains("generation 2"));
                assertThat(textOf(browser, By.id("webhook-secret")))
                        .contains("last rotation done (ops page on ");
                assertThat(rig.sandbox.currentSecret()).isNotEqualTo(RunningInbox.SECRET);
                assertThat(rig.postSignedWith(rotating, rig.sandbox.currentSecret())).isEqualTo(200);
                assertThat(browser.getPageSource()).doesNotContain(RunningInbox.SECRET, rig.sandbox.currentSecret(),
                        rig.key);
            } finally {
                browser.quit();
            }
        }
    }

    private static void assumeChromium() {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "SKIPPED: the ops page browser test needs Debian's chromium and chromium-driver"
                        + " (apt-get install chromium chromium-driver; .ci/run installs them)");
    }

    private static WebDriver headlessChromium() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1200,1000");
        return new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build(), options);
    }

    /** Labelled times every 10 minutes of the last hour (UTC), and a scale in deliveries per minute that fits the bars. */
    private static void theChartHasATimeAxisAndAScale(WebDriver browser) throws Exception {
        List<String> times = read(() -> browser.findElements(By.cssSelector("#chart text.x-label")).stream()
                .map(WebElement::getText).toList());
        assertThat(times).hasSize(6).allMatch(t -> t.matches("\\d\\d:\\d0"));
        List<LocalTime> parsed = times.stream().map(LocalTime::parse).toList();
        for (int i = 1; i < parsed.size(); i++) {
            assertThat(Duration.between(parsed.get(i - 1), parsed.get(i)).plusDays(1).toMinutes() % (24 * 60))
                    .as("ten minutes apart: %s", times).isEqualTo(10);
        }
        LocalTime now = LocalTime.now(ZoneOffset.UTC);
        long lastLabelAgo = (Duration.between(parsed.get(5), now).toMinutes() + 24 * 60) % (24 * 60);
        assertThat(lastLabelAgo).as("the last label %s is the latest ten minutes before %s UTC", times.get(5), now)
                .isBetween(0L, 10L);
        assertThat(textOf(browser, By.cssSelector("#chart text.axis-title"))).contains("UTC");

        List<String> scale = read(() -> browser.findElements(By.cssSelector("#chart text.y-label")).stream()
                .map(WebElement::getText).toList());
        assertThat(scale).first().isEqualTo("0 /min");
        assertThat(scale).allMatch(t -> t.matches("\\d+ /min"));
        long top = Long.parseLong(scale.get(scale.size() - 1).replace(" /min", ""));
        long busiestMinute = scalar("""
                select greatest(
                  (select max(n) from (select count(*) n from webhook_inbox group by date_trunc('minute', received_at)) r),
                  (select max(n) from (select count(*) n from webhook_inbox where processed_at is not null
                                        group by date_trunc('minute', processed_at)) p))""");
        assertThat(top).as("the scale's top covers the busiest minute (%s) and is 1, 2 or 5 times a power of 10",
                busiestMinute).isGreaterThanOrEqualTo(busiestMinute).isIn(1L, 2L, 5L);
    }

    /** Waits on the page, which re-renders itself while it is read: an element replaced under a read is read again. */
    private static org.awaitility.core.ConditionFactory onPage() {
        return await().atMost(Duration.ofSeconds(15)).ignoreException(StaleElementReferenceException.class);
    }

    private static <T> T read(Callable<T> fromPage) {
        return onPage().until(fromPage, Objects::nonNull);
    }

    private static String textOf(WebDriver browser, By element) {
        return read(() -> browser.findElement(element).getText());
    }

    private static void click(WebDriver browser, By element) {
        read(() -> {
            browser.findElement(element).click();
            return true;
        });
    }

    private static String failedKey() throws Exception {
        try (var c = TestDatabase.dataSource().getConnection(); var s = c.createStatement();
             var rs = s.executeQuery("select delivery_key from webhook_inbox where failed_at is not null")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
