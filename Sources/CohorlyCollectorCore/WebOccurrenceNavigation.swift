import CohorlySQLite

/// How an occurrence is reached: `GET /events/<ref>` where `<ref>` is the event's row id or its `$insert_id` (what
/// `cohorly crashes list` prints; a unique prefix of it too, as `cohorly crashes show` takes), the page; with
/// `.json` after it, the event as stored, as a download. An occurrence page links to the occurrences before and
/// after it in crash-time order: of its issue, or of every `$exception` when it has none.
extension Router {
    /// The answer to `GET /events/<reference>`; nil when no `$exception` event is named by it.
    func occurrence(reference: Substring) throws -> HTTPResponse? {
        let raw = reference.hasSuffix(".json")
        guard let event = try occurrenceEvent(raw ? reference.dropLast(".json".count) : reference) else { return nil }
        return raw ? Self.storedJSON(event) : try occurrencePage(event)
    }

    /// The `$exception` event `reference` names: a row id, else an insert id or a unique prefix of one.
    func occurrenceEvent(_ reference: Substring) throws -> StoredEvent? {
        if let id = Int64(reference), id > 0, let event = try storedEvent(id: id) { return event }
        guard !reference.isEmpty, reference.utf8.count <= 200, !reference.contains("/") else { return nil }
        return try? crashes.event(insertId: String(reference))
    }

    /// `/events/<id>.json`: the event as the collector stored it — its columns and its properties byte for byte as
    /// stored — as an attachment (`occurrence-<id>.json`), with the pages' headers.
    static func storedJSON(_ event: StoredEvent) -> HTTPResponse {
        var text = "{\"id\":\(event.id),\"event\":"
        JSONValue.writeString(event.event, into: &text)
        text += ",\"distinct_id\":"
        JSONValue.writeString(event.distinctId, into: &text)
        text += ",\"time\":\(event.time),\"insert_id\":"
        if let insertId = event.insertId { JSONValue.writeString(insertId, into: &text) } else { text += "null" }
        text += ",\"received_at\":\(event.receivedAt),\"properties\":"
        text += event.propertiesJSON.isEmpty ? "{}" : event.propertiesJSON
        text += "}\n"
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "application/json"),
                ("Content-Disposition", "attachment; filename=\"occurrence-\(event.id).json\""),
            ] + WebPage.securityHeaders, body: Array(text.utf8))
    }

    /// *Previous* (the occurrence crashed before `event`) and *Next* (the one after), of `issue` when it has one,
    /// else of every `$exception`; and the download of the stored event.
    func occurrenceNavigation(_ event: StoredEvent, issue: Int64?) throws -> HTML {
        let neighbours: (earlier: Int64?, later: Int64?)
        if let issue {
            neighbours = try IssueQueries(store: store).neighbours(issue: issue, event: event)
        } else {
            func next(newestFirst: Bool) throws -> Int64? {
                var query = EventQuery(event: "$exception", afterId: event.id, limit: 1, newestFirst: newestFirst)
                query.byTime = true
                return try store.events(matching: query).first?.id
            }
            neighbours = (try next(newestFirst: true), try next(newestFirst: false))
        }
        var html = HTML(raw: "<nav class=\"pager occurrence-nav\">")
        if let earlier = neighbours.earlier {
            html.raw("<a class=\"previous\" rel=\"prev\" href=\"/events/\(earlier)\">&#8592; Previous</a>")
        }
        if let later = neighbours.later {
            html.raw("<a class=\"next\" rel=\"next\" href=\"/events/\(later)\">Next &#8594;</a>")
        }
        html.raw("<a class=\"raw\" href=\"/events/\(event.id).json\" download>Stored JSON</a></nav>")
        return html
    }
}

extension IssueQueries {
    /// The occurrences of issue `issue` just before and just after `event` in crash-time order (ties by event
    /// id), each nil at the ends.
    func neighbours(issue: Int64, event: StoredEvent) throws -> (earlier: Int64?, later: Int64?) {
        func one(_ comparison: String, _ direction: String) -> String {
            let part = { (table: String) in
                """
                SELECT * FROM (SELECT event_id, time FROM \(table) WHERE issue_id = ?1
                    AND (time, event_id) \(comparison) (?2, ?3) ORDER BY time \(direction), event_id \(direction) LIMIT 1)
                """
            }
            return "SELECT event_id FROM (\(part("issue_occurrences")) UNION ALL \(part("issue_occurrences_new")))"
                + " ORDER BY time \(direction), event_id \(direction) LIMIT 1"
        }
        let values: [SQLiteStatement.Value] = [.int(issue), .int(event.time), .int(event.id)]
        return try store.reading { db in
            var found: [Int64?] = []
            for sql in [one("<", "DESC"), one(">", "ASC")] {
                var id: Int64?
                try db.prepare(sql).rows(values) { row in
                    id = row.int(0)
                    return false
                }
                found.append(id)
            }
            return (found[0], found[1])
        }
    }
}
