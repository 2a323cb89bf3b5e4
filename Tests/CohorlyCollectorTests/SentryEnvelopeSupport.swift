import Cohorly
import Foundation

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Sentry envelopes for the collector's envelope route, framed as Sentry frames them: a header line, then per item a
/// header line and its payload.
enum SentryEnvelopes {
    static let key = "t1"
    static let projectId = "42"
    static let path = "/api/42/envelope/"
    static let dsn = "http://t1@127.0.0.1:4000/42"

    /// The request headers of an SDK: the envelope type and `X-Sentry-Auth` with `key` (none when nil).
    static func headers(key: String? = SentryEnvelopes.key, extra: [(String, String)] = []) -> [(String, String)] {
        var headers = [("Content-Type", "application/x-sentry-envelope")]
        if let key {
            headers.append(
                ("X-Sentry-Auth", "Sentry sentry_version=7, sentry_client=cohorly-tests/1.0, sentry_key=\(key)"))
        }
        return headers + extra
    }

    /// `header \n (item-header \n payload \n)…`, each item length-prefixed unless `lengths` is false.
    static func envelope(_ header: CohorlyValue, _ items: [(type: String, payload: [UInt8])], lengths: Bool = true)
        -> [UInt8]
    {
        var bytes = Array(header.jsonString.utf8) + [0x0A]
        for item in items {
            var itemHeader: [String: CohorlyValue] = ["type": .string(item.type)]
            if lengths { itemHeader["length"] = .int(item.payload.count) }
            bytes += Array(CohorlyValue.object(itemHeader).jsonString.utf8) + [0x0A] + item.payload + [0x0A]
        }
        return bytes
    }

    static func json(_ value: CohorlyValue) -> [UInt8] { Array(value.jsonString.utf8) }

    /// A native crash event as the Sentry destination sends it: a SIGSEGV in `App.crash()` (device-symbolicated,
    /// with an inlined call), a second thread, one debug image, a breadcrumb.
    static func crashEvent(eventId: String, user: String = "user-1") -> CohorlyValue {
        let frames: CohorlyValue = [
            [
                "instruction_addr": "0x7f0000001100", "image_addr": "0x7f0000000000", "package": "/opt/app/App",
                "function": "main", "filename": "main.swift", "lineno": 3, "in_app": true,
            ],
            [
                "instruction_addr": "0x7f0000001200", "image_addr": "0x7f0000000000", "package": "/opt/app/App",
                "function": "App.crash()", "filename": "App.swift", "lineno": 10, "colno": 5, "in_app": true,
            ],
            [
                "instruction_addr": "0x7f0000001200", "image_addr": "0x7f0000000000", "package": "/opt/app/App",
                "function": "App.poke(_:)", "filename": "Poke.swift", "lineno": 2, "in_app": true,
            ],
        ]
        return [
            "event_id": .string(eventId), "timestamp": "2026-12-01T10:00:00.250Z", "level": "fatal",
            "platform": "native", "release": "app@1.0", "dist": "7", "environment": "production",
            "user": ["id": .string(user)],
            "contexts": [
                "os": ["name": "Linux", "version": "12", "kernel_version": "6.1.0"], "device": ["arch": "x86_64"],
            ],
            "sdk": ["name": "cohorly.swift", "version": "1.2.3"],
            "exception": [
                "values": [
                    [
                        "type": "SIGSEGV", "value": "Segmentation fault", "thread_id": 101,
                        "mechanism": [
                            "type": "signalhandler", "handled": false, "synthetic": true,
                            "meta": ["signal": ["number": 11, "code": 1, "name": "SIGSEGV"]],
                        ],
                        "stacktrace": ["frames": frames],
                    ]
                ]
            ],
            "threads": [
                "values": [
                    ["id": 101, "name": "main", "crashed": true, "current": true],
                    [
                        "id": 102, "name": "worker", "crashed": false,
                        "stacktrace": [
                            "frames": [["instruction_addr": "0x7f0000001300", "image_addr": "0x7f0000000000"]]
                        ],
                    ],
                ]
            ],
            "debug_meta": [
                "images": [
                    [
                        "type": "elf", "code_file": "/opt/app/App", "image_addr": "0x7f0000000000",
                        "image_size": 65536, "code_id": "0102030405060708090a0b0c0d0e0f1011121314",
                        "debug_id": "04030201-0605-0807-090a-0b0c0d0e0f10", "arch": "x86_64",
                    ]
                ]
            ],
            "breadcrumbs": [
                "values": [["timestamp": 1_796_119_200.5, "category": "track", "message": "Checkout", "data": [:]]]
            ],
            "tags": ["plan": "pro"],
        ]
    }

    /// Breadcrumbs with every member Sentry defines: an `http` one (a numeric timestamp) and an `error` one.
    static let typedBreadcrumbs: CohorlyValue = [
        "values": [
            [
                "timestamp": 1_796_119_200.5, "type": "http", "level": "warning", "category": "net",
                "message": "GET /pay", "data": ["status_code": 500],
            ],
            [
                "timestamp": "2026-12-01T10:00:00.750Z", "type": "error", "level": "error", "category": "app",
                "message": "retry", "data": [:],
            ],
        ]
    ]

    /// A session update.
    static func session(_ sid: String, status: String, initial: Bool = false, errors: Int = 0) -> CohorlyValue {
        [
            "sid": .string(sid), "did": "user-1", "init": .bool(initial), "started": "2026-12-01T09:59:00.000Z",
            "timestamp": "2026-12-01T10:00:00.250Z", "duration": 60.25, "status": .string(status),
            "errors": .int(errors), "attrs": ["release": "app@1.0", "environment": "production"],
        ]
    }
}

extension SentryEnvelopes {
    /// A chained native crash as other Sentry SDKs send one: the cause (a thrown error, its own stack and thread)
    /// and the exception raised (a SIGABRT, its mechanism with every member Sentry defines), frames with members
    /// the model has no field for (`vars`, `pre_context`, `context_line`, `post_context`, `symbol_addr`, `lang`),
    /// numeric addresses, an inlined call, registers; three threads (one without a stack); two debug images;
    /// breadcrumbs with and without `type`, `level`, `category`, `message` and `data`; a fingerprint, tags and
    /// extras.
    static func chainedCrashEvent(eventId: String) -> CohorlyValue {
        let image: CohorlyValue = "0x7f0000000000"
        let cause: CohorlyValue = [
            "type": "App.ConfigError", "value": "missing key \"port\"", "module": "App", "thread_id": 101,
            "mechanism": [
                "type": "chained", "handled": true, "source": "cause", "exception_id": 1, "parent_id": 0,
                "is_exception_group": false,
            ],
            "stacktrace": [
                "frames": [
                    [
                        "instruction_addr": "0x7f0000001100", "image_addr": image, "package": "/opt/app/App",
                        "function": "main", "filename": "main.swift", "lineno": 3, "in_app": true, "lang": "swift",
                    ],
                    [
                        "instruction_addr": "0x7f0000001400", "image_addr": image, "package": "/opt/app/App",
                        "function": "App.load()", "filename": "Load.swift", "lineno": 7, "colno": 9, "in_app": true,
                        "vars": ["key": "\"port\""], "pre_context": ["let table = try read()"],
                        "context_line": "throw ConfigError.missing(key)", "post_context": ["}"],
                    ],
                ]
            ],
        ]
        let raised: CohorlyValue = [
            "type": "SIGABRT", "value": "Abort", "module": "libc", "thread_id": 101,
            "mechanism": [
                "type": "signalhandler", "handled": false, "synthetic": true, "exception_id": 0,
                "help_link": "https://example.com/abort", "data": ["relevance": "high"],
                "meta": [
                    "signal": ["number": 6, "code": 0, "name": "SIGABRT"], "errno": ["number": 2, "name": "ENOENT"],
                ],
            ],
            "stacktrace": [
                "instruction_addr_adjustment": "all_but_first", "registers": ["rip": "0x7f0000201000"],
                "frames": [
                    [
                        "instruction_addr": 139_637_976_731_904, "image_addr": 139_637_976_727_552,
                        "symbol_addr": 139_637_976_731_888, "package": "/opt/app/App", "function": "main",
                        "filename": "main.swift", "lineno": 3, "in_app": true,
                    ],
                    [
                        "instruction_addr": "0x7f0000001200", "image_addr": image, "package": "/opt/app/App",
                        "function": "App.crash()", "filename": "App.swift", "lineno": 10, "colno": 5, "in_app": true,
                    ],
                    [
                        "instruction_addr": "0x7f0000001200", "image_addr": image, "package": "/opt/app/App",
                        "function": "App.poke(_:)", "filename": "Poke.swift", "lineno": 2, "in_app": true,
                    ],
                    [
                        "instruction_addr": "0x7f0000201000", "image_addr": "0x7f0000200000",
                        "package": "/usr/lib/libc.so.6", "function": "abort", "in_app": false, "lang": "c",
                    ],
                ],
            ],
        ]
        return [
            "event_id": .string(eventId), "timestamp": 1_796_119_300.125, "level": "fatal", "platform": "native",
            "release": "app@1.1", "environment": "staging", "user": ["id": 42, "username": "ada"],
            "contexts": ["os": ["name": "Linux", "version": "13", "distribution_name": "debian"]],
            "sdk": ["name": "sentry.native", "version": "0.7.0"],
            "exception": ["values": [cause, raised]],
            "threads": [
                "values": [
                    ["id": "101", "name": "main", "crashed": true, "current": true],
                    [
                        "id": 102, "name": "worker", "crashed": false,
                        "stacktrace": [
                            "frames": [
                                [
                                    "instruction_addr": "0x7f0000201080", "image_addr": "0x7f0000200000",
                                    "package": "/usr/lib/libc.so.6", "function": "futex_wait", "in_app": false,
                                ]
                            ]
                        ],
                    ],
                    ["id": 103, "crashed": false],
                ]
            ],
            "debug_meta": [
                "images": [
                    [
                        "type": "elf", "code_file": "/opt/app/App", "image_addr": image, "image_size": 65536,
                        "code_id": "0102030405060708090a0b0c0d0e0f1011121314",
                        "debug_id": "04030201-0605-0807-090a-0b0c0d0e0f10", "arch": "x86_64",
                    ],
                    [
                        "type": "elf", "code_file": "/usr/lib/libc.so.6", "image_addr": "0x7f0000200000",
                        "image_size": 2_097_152, "code_id": "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4",
                    ],
                ]
            ],
            "breadcrumbs": [
                "values": [
                    [
                        "timestamp": 1_796_119_299.5, "type": "http", "level": "warning", "category": "net",
                        "message": "GET /config", "data": ["status_code": 404],
                    ],
                    ["timestamp": "2026-12-01T10:01:39.750Z", "category": "ui.click", "message": "Reload"],
                    ["timestamp": 1_796_119_300, "level": "error"],
                    ["timestamp": 1_796_119_300.1, "type": "navigation", "data": ["from": "/a", "to": "/b"]],
                ]
            ],
            "fingerprint": ["config-abort"], "tags": [["plan", "team"], ["region", "eu"]],
            "extra": ["attempt": 3],
        ]
    }
}
