// posthog-compliance-adapter: the HTTP adapter PostHog's SDK test harness drives (docs/posthog.md "The compliance adapter"),
// wrapped around the real client — its queue, transport and retry code; the adapter never sends to PostHog itself.
//
//   posthog-compliance-adapter [--port N] [--bind ADDR] [--wire v1|batch]   (PORT from the environment; default
//   8080, 127.0.0.1, v1; `--wire batch` drives the client on the legacy /batch wire and declares capture_v0)
import Cohorly
import CohorlyHTTPServer
import Foundation

var port = UInt16(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
var bind = "127.0.0.1"
var wire = PostHogConfiguration.CaptureEndpoint.v1
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--port":
        guard let value = arguments.popFirst().flatMap(UInt16.init) else { usage("--port needs a number 0-65535") }
        port = value
    case "--bind":
        guard let value = arguments.popFirst() else { usage("--bind needs an IPv4 address") }
        bind = value
    case "--wire":
        guard let value = arguments.popFirst().flatMap(PostHogConfiguration.CaptureEndpoint.init(rawValue:)) else {
            usage("--wire needs v1 or batch")
        }
        wire = value
    case "-h", "--help": usage(nil)
    default: usage("unknown argument \(argument)")
    }
}

func usage(_ problem: String?) -> Never {
    if let problem { FileHandle.standardError.write(Data("posthog-compliance-adapter: \(problem)\n".utf8)) }
    let text =
        "usage: posthog-compliance-adapter [--port N] [--bind ADDR] [--wire v1|batch]   (PORT from the environment;"
        + " default 8080; --wire batch: the legacy /batch endpoint, capture_v0)\n"
    FileHandle.standardError.write(Data(text.utf8))
    exit(problem == nil ? 0 : 2)
}

// SIGINT and SIGTERM stop the server and remove the instance's queue directory. Handled before the server
// starts: a harness that stops the adapter right after it said it listens must not kill it with its queue left.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let stop = DispatchSemaphore(value: 0)
var sources: [any DispatchSourceSignal] = []
for number in [SIGINT, SIGTERM] {
    let source = DispatchSource.makeSignalSource(signal: number)
    source.setEventHandler { stop.signal() }
    source.resume()
    sources.append(source)
}
let adapter = Adapter(wire: wire)
// The collector's Host and Origin rules: a web page can neither reach the adapter through a name it controls nor
// re-point it (with its key) from another origin.
let server = PlainHTTPServer(maxBodyBytes: 4 << 20, policy: LoopbackRequestPolicy(bindAddress: bind)) { request in
    adapter.handle(request)
}
do {
    let chosen = try server.start(address: bind, port: port)
    FileHandle.standardOutput.write(Data("posthog-compliance-adapter: listening on http://\(bind):\(chosen)\n".utf8))
} catch {
    FileHandle.standardError.write(Data("posthog-compliance-adapter: \(error)\n".utf8))
    exit(1)
}
stop.wait()
server.stop()
adapter.reset()
exit(0)
