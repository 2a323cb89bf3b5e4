import CohorlyJSON

/// `$exception` events of the apps the issue tests crash (Shop and Till: docs/issues.md, "Apps"), for
/// IssueAppTests, IssuesCLITests and WebIssueSearchBrowserTests: each fails in one in-app function of module
/// `Shop`, called from a frame that is not the app's (`Router.dispatch(_:)`).
public enum TwoAppCrashes {
    /// The properties of a `$exception` of `app` (`$app_name`; nil: none) failing in `function` with `value`.
    public static func properties(
        _ insertId: String, app: String?, function: String, release: String, user: String = "u",
        time: Int = 1_800_000_000_000, value: String = "boom", level: String = "fatal"
    ) -> CohorlyValue {
        var properties: [String: CohorlyValue] = [
            "distinct_id": .string(user), "$insert_id": .string(insertId), "time": .int(time),
            "release": .string(release), "$exception_level": .string(level),
            "$exception_list": [
                [
                    "type": "Fatal error", "value": .string(value),
                    "mechanism": ["type": "swift_fatal", "handled": false],
                    "stacktrace": [
                        "type": "raw",
                        "frames": [
                            [
                                "platform": "native", "instruction_addr": "0x5555000010a0",
                                "image_addr": "0x555500000000", "module": "Shop", "in_app": false,
                                "function": "Router.dispatch(_:)", "instruction_addr_kind": "return_address",
                            ],
                            [
                                "platform": "native", "instruction_addr": "0x5555000012a0",
                                "image_addr": "0x555500000000", "module": "Shop", "in_app": true,
                                "function": .string(function), "instruction_addr_kind": "pc",
                            ],
                        ],
                    ],
                ]
            ],
        ]
        if let app { properties["$app_name"] = .string(app) }
        return .object(properties)
    }

    /// ``properties(_:app:function:release:user:time:value:level:)`` as an event of a `/track` batch.
    public static func event(
        _ insertId: String, app: String?, function: String, release: String, user: String = "u",
        time: Int = 1_800_000_000_000, value: String = "boom", level: String = "fatal"
    ) -> CohorlyValue {
        [
            "event": "$exception",
            "properties": properties(
                insertId, app: app, function: function, release: release, user: user, time: time, value: value,
                level: level),
        ]
    }
}
