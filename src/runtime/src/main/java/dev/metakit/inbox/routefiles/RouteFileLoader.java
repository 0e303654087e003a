package dev.metakit.inbox.routefiles;

import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.dsl.yaml.YamlRoutesBuilderLoader;
import org.apache.camel.spi.Resource;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.YamlUnicodeReader;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

import java.io.InputStream;

/**
 * Camel's YAML route loader, but for a route file left without routes (its routes deleted, comments only): that file
 * holds no route, as if it were left out, and the bundle says which essential routes are missing in its one line
 * (the essential-routes check) rather than stopping the start with Camel's "Unable to parse resource". Saved so into
 * a running bundle, the routes it held are removed ({@link NoRoutes}), as the next start would have none of them.
 */
public final class RouteFileLoader extends YamlRoutesBuilderLoader {

    @Override
    public void preParseRoute(Resource resource) throws Exception {
        if (!holdsNoYaml(resource)) {
            super.preParseRoute(resource); // which refuses an empty file ("Resource is empty")
        }
    }

    @Override
    public RouteBuilder doLoadRouteBuilder(Resource resource) throws Exception {
        return holdsNoYaml(resource) ? new NoRoutes(resource) : super.doLoadRouteBuilder(resource);
    }

    /** No YAML document in the file: nothing, comments or blank lines only. A file that does not parse is not this. */
    static boolean holdsNoYaml(Resource resource) throws Exception {
        LoadSettings settings = LoadSettings.builder().setLabel(resource.getLocation()).build();
        try (InputStream in = resource.getInputStream()) {
            Composer composer = new Composer(settings,
                    new ParserImpl(settings, new StreamReader(settings, new YamlUnicodeReader(in))));
            return composer.getSingleNode().isEmpty();
        } catch (RuntimeException unparsable) {
            return false; // Camel's own loading says where and why
        }
    }
}
