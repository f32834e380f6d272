package io.sealpipe.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The committed seed corpus is what {@link FuzzSeeds} makes, so a change of an input format or of
 * the seeds cannot leave stale files that test something else than their names say. Other files
 * in those folders (a crash input kept as a regression test) are left alone.
 */
class FuzzSeedsTest {

    @Test
    void committedSeedsAreUpToDate() throws IOException {
        List<String> stale = new ArrayList<>();
        long total = 0;
        for (Map.Entry<String, Map<String, byte[]>> folder : FuzzSeeds.all().entrySet()) {
            for (Map.Entry<String, byte[]> seed : folder.getValue().entrySet()) {
                String name = folder.getKey() + "/" + seed.getKey();
                try (InputStream in = FuzzSeedsTest.class.getResourceAsStream(name)) {
                    if (in == null || !Arrays.equals(in.readAllBytes(), seed.getValue())) {
                        stale.add(name);
                    }
                }
                total += seed.getValue().length;
            }
        }
        assertEquals(List.of(), stale, stale.size() + " seed files are missing or differ from FuzzSeeds: run the"
                + " command in FuzzSeeds' comment");
        // The corpus runs in every mvn test: keep it small.
        assertEquals(true, total < 512 * 1024, "the seeds take " + total + " bytes");
    }
}
