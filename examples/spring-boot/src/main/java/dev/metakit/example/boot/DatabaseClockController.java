package dev.metakit.example.boot;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The host's own request on its own pool (Boot's spring.datasource): the database's clock. The bundle keeps a pool of
 * its own on the same database, so a burst of webhooks does not queue this request behind the inbox's writers.
 */
@RestController
public class DatabaseClockController {
    static final String PATH = "/database/clock";
    private final JdbcTemplate jdbc;

    public DatabaseClockController(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @GetMapping(PATH)
    public String clock() {
        return jdbc.queryForObject("select clock_timestamp()::text", String.class);
    }
}
