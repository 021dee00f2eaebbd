package dev.sluice.registry;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import java.util.List;
import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

/**
 * Apicurio's list of dynamic settings is made at build time by a Quarkus extension that Maven
 * Central does not serve. The local registry changes no setting at run time, so the list is empty.
 */
@ApplicationScoped
public class DynamicConfigPropertiesProducer {
    @Produces
    @ApplicationScoped
    public DynamicConfigPropertyList dynamicConfigProperties() {
        return new DynamicConfigPropertyList(List.of());
    }
}
