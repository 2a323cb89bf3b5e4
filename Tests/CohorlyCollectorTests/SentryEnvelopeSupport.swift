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

    /// A session update.
    static func session(_ sid: String, status: String, initial: Bool = false, errors: Int = 0) -> CohorlyValue {
        [
            "sid": .string(sid), "did": "user-1", "init": .bool(initial), "started": "2026-12-01T09:59:00.000Z",
            "timestamp": "2026-12-01T10:00:00.250Z", "duration": 60.25, "status": .string(status),
            "errors": .int(errors), "attrs": ["release": "app@1.0", "environment": "production"],
        ]
    }
}
