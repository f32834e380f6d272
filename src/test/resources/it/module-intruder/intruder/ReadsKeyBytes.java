package intruder;

import io.sealpipe.AesKey;
import io.sealpipe.internal.KeyAccess;

/** Would print an AesKey's bytes, if io.sealpipe exported io.sealpipe.internal. */
public class ReadsKeyBytes {
    public static void main(String[] args) {
        byte[] bytes = KeyAccess.withBytes(AesKey.copyOf(new byte[16]), byte[]::clone);
        System.out.println(java.util.HexFormat.of().formatHex(bytes));
    }
}
