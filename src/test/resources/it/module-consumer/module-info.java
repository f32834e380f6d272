/** An application on the module path that uses sealpipe (ModuleConsumerIT). */
module consumer {
    requires io.sealpipe;
}
