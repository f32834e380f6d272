/** A module that tries to read key bytes through sealpipe's internals: must not compile (ModuleConsumerIT). */
module intruder {
    requires io.sealpipe;
}
