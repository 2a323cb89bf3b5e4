// The `cohorly` CLI dispatcher: one subcommand per file; the libraries do the work.
// Exit status: 0 success, 1 some input or request failed, 2 usage error.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())
switch arguments.first {
case "serve": exit(ServeCommand.run(rest))
case "events": exit(EventsCommand.run(rest))
case "-h", "--help", "help":
    print(Usage.text)
    exit(0)
default:
    Usage.fail(arguments.first.map { "unknown command \($0)" } ?? "missing command")
}
