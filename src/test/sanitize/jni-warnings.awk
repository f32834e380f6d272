# Lists the -Xcheck:jni warnings in HotSpot logs (-XX:+LogVMOutput) that are not JNA's.
# A warning is a line "WARNING..." or "FATAL ERROR..." followed by the Java stack of its thread
# ("\tat ..." frames, "\t- locked ..." lines). It is charged to the first frame outside the JDK
# (java.base): the Java code whose call led to the JNI call. Warnings charged to JNA
# (com.sun.jna) are only counted: its libjnidispatch JNI_OnLoad, run when the openssl-jna
# engine loads, exceeds 32 local references and skips one exception check; that is JNA's
# native code, not ours. Every other warning is printed, whoever it is charged to, so that a
# new kind is looked at rather than filtered away.
function flush() {
    if (head != "") {
        if (culprit ~ /^com\.sun\.jna\./) {
            ignored++
        } else {
            print head
            print "\tcharged to: " (culprit == "" ? "no Java frame" : culprit)
        }
    }
    head = ""
    culprit = ""
}
/^(WARNING|FATAL ERROR)/ { flush(); head = FILENAME ": " $0; next }
head != "" && /^\tat / {
    if (culprit == "" && $0 !~ /\(java\.base@/) {
        culprit = substr($0, 5)
    }
    next
}
head != "" && /^\t- / { next }
{ flush() }
END {
    flush()
    if (ignored) {
        print "(" ignored " warning(s) from JNA's own JNI_OnLoad ignored)" > "/dev/stderr"
    }
}
