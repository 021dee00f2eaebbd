package dev.sluice.bench;

import org.apache.flink.table.functions.ScalarFunction;

/**
 * Nexmark q14's count_char: how many times the first character of {@code character} occurs in
 * {@code text}, 0 for no text. The benchmark's own function counts UTF-8 bytes; the generated
 * text is ASCII, where the two agree.
 */
public class CountChar extends ScalarFunction {
  public long eval(String text, String character) {
    if (text == null || character == null || character.isEmpty()) return 0;
    char wanted = character.charAt(0);
    long count = 0;
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) == wanted) count++;
    }
    return count;
  }
}
