/// The read API's lists (`/api/events`, `/api/aliases`, `/api/engage`, `/api/sessions`): `limit` (0…100,000) and `after` (a row
/// id) range-checked, rows read one at a time into one bounded page (`JSONPage`).
extension Router {
    func events(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = EventQuery(
            event: request.query["event"], distinctId: request.query["distinct_id"],
            insertId: request.query["insert_id"],
            afterId: try request.integer("after", in: QueryLimits.rowId).map(Int64.init),
            limit: try request.integer("limit", in: QueryLimits.limit, absent: 1000),
            newestFirst: request.query["order"] == "newest")
        var page = JSONPage(key: "events")
        try store.forEachEvent(matching: query) { event in
            page.add(
                [
                    "id": .int(Int(event.id)), "event": .string(event.event),
                    "distinct_id": .string(event.distinctId),
                    "time": .int(Int(event.time)), "insert_id": event.insertId.map(JSONValue.string) ?? .null,
                    "received_at": .int(Int(event.receivedAt)),
                    "properties": JSONValue(json: event.propertiesJSON) ?? .object([:]),
                ], id: event.id)
        }
        return page.response(["total": .int(try store.eventCount())])
    }

    /// Stored records of `kind`, oldest first, as `{"<key>": [record…], …}` (release-health session updates as sent).
    func records(_ kind: String, _ request: HTTPRequest, key: String = "records") throws -> HTTPResponse {
        let limit = try request.integer("limit", in: QueryLimits.limit, absent: 1000)
        let after = try request.integer("after", in: QueryLimits.rowId).map(Int64.init)
        var page = JSONPage(key: key)
        try store.forEachRecord(kind: kind, afterId: after, limit: limit) { record in
            page.add(JSONValue(json: record.json) ?? .null, id: record.id)
        }
        return page.response()
    }
}
