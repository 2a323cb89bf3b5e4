// The collector's routes are written against the HTTP server's request and response (module CohorlyHTTPServer)
// and the API contract it shares with the CLI (module CohorlyCollectorAPI: flag definitions, debug-file kinds,
// query limits); programs that drive the collector (its tests, the fuzz harness) see the same types through
// `import CohorlyCollector`.
@_exported import CohorlyCollectorAPI
@_exported import CohorlyHTTPServer
