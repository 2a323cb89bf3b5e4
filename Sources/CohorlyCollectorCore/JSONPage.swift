/// One page of a list answer built item by item within a byte budget, so a read never holds more than about
/// `budget` bytes of answer whatever the database holds. A page that stops early says where the next one starts
/// (`next_after`) and that it is `truncated`. The first item is always taken (one stored item is at most the
/// ingestion body limit).
struct JSONPage {
    /// Bytes of items per page: 8 MiB (8,388,608).
    static let defaultBudget = 8 << 20

    private let budget: Int
    /// The answer so far: `{"<key>":[item,item…`.
    private var body: [UInt8]
    private var lastId: Int64?
    private(set) var count = 0
    private(set) var nextAfter: Int64?

    init(key: String, budget: Int = JSONPage.defaultBudget) {
        self.budget = budget
        body = Array("{\(JSONValue.string(key).jsonString):[".utf8)
    }

    /// Adds `item` (row `id`), clipped to `NestingLimit.pageItem` levels (so one record nested too deep cannot
    /// make the page unreadable); false when it does not fit: the page then ends at the previous row.
    mutating func add(_ item: JSONValue, id: Int64) -> Bool {
        let text = item.clipped().jsonString.utf8
        if count > 0, body.count + text.count > budget {
            nextAfter = lastId
            return false
        }
        if count > 0 { body.append(UInt8(ascii: ",")) }
        body.append(contentsOf: text)
        count += 1
        lastId = id
        return true
    }

    /// Closes the page: `{"<key>":[…],"count":N,"truncated":B[,"next_after":ID], …extra}`, status 200.
    consuming func response(_ extra: [String: JSONValue] = [:]) -> HTTPResponse {
        var tail = extra
        tail["count"] = .int(count)
        tail["truncated"] = .bool(nextAfter != nil)
        if let nextAfter { tail["next_after"] = .int(Int(nextAfter)) }
        body.append(UInt8(ascii: "]"))
        body.append(UInt8(ascii: ","))
        body.append(contentsOf: JSONValue.object(tail).jsonString.utf8.dropFirst())
        return HTTPResponse(status: 200, body: body)
    }
}
