import Foundation

/// `CrashDemo --help`: every command and option (a test checks that each option the parser takes is listed).
let helpText = """
    CrashDemo: crashes on demand, in every supported way.

    Like a real app it uses the Cohorly client (COHORLY_HOST, default http://127.0.0.1:4000, and COHORLY_TOKEN;
    COHORLY_DESTINATION=posthog sends PostHog capture V1 to that host, with COHORLY_TOKEN as the project API key)
    and CohorlyCrash, which sends the crash of the previous launch as a `$exception` event.

    USAGE:
      CrashDemo list                                     the crash kinds
      CrashDemo crash KIND [--on main|thread|dispatch|queue|task] [options]
      CrashDemo scenario NAME [options]                  test scenarios (see Scenario.swift)
      CrashDemo hang CASE --hang-threshold-ms N [--hang-ms M]  hang watchdog cases (see Hangs.swift):
                                                         main, executor, heartbeat, forever, busy, plain-loop, idle
      CrashDemo throw-site KIND [options]                a handled error thrown two calls below its catch
                                                         (see ThrowSiteScenario.swift)
      CrashDemo reports [--report-dir DIR]               the reports waiting to be sent
      CrashDemo run [options]                            a clean launch: sends pending reports, then exits
      CrashDemo symbolicate-report FILE [--crashed-only] benchmarks: times the next launch's work on a report
      CrashDemo bench-breadcrumbs [--tracks N]           benchmarks: track() with and without breadcrumbs
      CrashDemo --help                                   this help

    OPTIONS:
      --on PLACE              where to crash: main (default), thread, dispatch (a global queue), queue (a serial
                              queue labeled demo.checkout-queue) or task
      --report-dir DIR        where reports go (default $COHORLY_CRASH_DIR, else the recorder's default,
                              $XDG_STATE_HOME/cohorly/crashes or ~/.local/state/cohorly/crashes)
      --storage DIR           the client's queue directory (default $COHORLY_STORAGE, else the client's
                              default, $XDG_STATE_HOME/cohorly or ~/.local/state/cohorly)
      --no-chain              do not call the handlers installed before the recorder's after the report
      --threads N             park N extra named threads (each --depth frames deep) before crashing
      --depth D               frames deep for the parked threads (default 3)
      --library PATH          a shared library with `cly_fixture_crash` (scenario dlopen-crash)
      --identify ID           identify the user before crashing
      --register K=V          register a super property K with the string V (after --identify)
      --crash-after-ms N      wait N ms after install before crashing (or, scenario sigkill, the kill; default 0)
      --recorder-only         only the crash recorder: no client, nothing sent
      --opt-out               opt the user out before crashing (no report is written)
      --version V             the app version in the release `CrashDemo@V` (default 1.0.0)
      --sender-timeout-ms N   how long the detached crash sender keeps trying (default 120000)
      --no-sender-at-crash    a crash does not start the sender: the next launch sends it
      --symbolication-budget-ms N
                              how long the threads after the first are symbolicated on the device (default 1000)
      --sender-executable P   the executable a crash starts as the sender (default /proc/self/exe)
      --memory-sample-ms N    how often the launch marker records resident memory (default 10000)
      --until FILE            crash, scenario sigkill: wait until FILE exists (at most 60 s) before crashing
      --no-abnormal-exits     do not mark the launch (no abnormal-exit reports; benchmarks)
      --app-sigterm MODE      the app's own SIGTERM handling, set before install: exit (a handler, then exit(7)),
                              continue (a handler, the launch goes on) or ignore (SIG_IGN); or after install:
                              dispatch (SIG_IGN and a dispatch signal source, as ServiceLifecycle does)
      --dist D                the dist crash and live events carry (default none)
      --print-fault-time      crash: print `fault_monotonic_ns N` (CLOCK_MONOTONIC) just before crashing
      --crashed-only          symbolicate-report: only the crashed thread
      --hang-threshold-ms N   turn the hang watchdog on with this threshold
      --hang-ms M             how long a `hang` case blocks (default 3000)
      --hang-report-after-ms N  report a hang still going on after N ms (default 30000)
      --max-breadcrumbs N     breadcrumbs a report keeps (default 50)
      --breadcrumb TEXT       add a breadcrumb right after install
      --tracks N              tracks-then-crash: events tracked first (default 60); bench-breadcrumbs: calls
      --corrupt-async MODE    test hook: the async walk reads a corrupt context after its first entry
                              (fault, validation or loop) and must stop cleanly
      --no-async-walk         do not walk async callers (benchmarks: the walk's cost)
      --async-read-pipe       test hook: the async walk reads memory through its pipe fallback (as where
                              process_vm_readv is refused)
      -h, --help              show this help

    ENVIRONMENT: COHORLY_HOST, COHORLY_TOKEN, COHORLY_DESTINATION, COHORLY_CRASH_DIR, COHORLY_STORAGE, XDG_STATE_HOME, HOME,
    SWIFT_BACKTRACE (enable=yes runs the Swift runtime's backtracer after the report).

    EXIT STATUS: a crash kills the process with its signal (132, 133, 134, 135, 136 or 139 in a shell);
    `run` exits 0 when the reports were delivered, 1 when not; 2 usage error.
    """
