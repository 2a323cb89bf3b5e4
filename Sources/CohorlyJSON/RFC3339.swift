/// RFC 3339 timestamps as PostHog's capture V1 reads and writes them: parsed with any offset and fraction,
/// written canonical UTC with milliseconds (`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`). Shared by the client (event
/// timestamps, request times) and the collector (validation).
package enum RFC3339 {
    /// Unix milliseconds of `text` (`2026-11-30T08:39:20Z`, `…20.5+02:00`, `…t…z`, a space for the `T`), or nil
    /// when it is not an RFC 3339 date-time.
    package static func milliseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { parse(Array($0)) }
    }

    /// `milliseconds` (unix) as canonical UTC text with milliseconds.
    package static func format(milliseconds: Int64) -> String {
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let rest = milliseconds - days * 86_400_000
        let (year, month, day) = civil(fromDays: days)
        let seconds = rest / 1000
        var out = ""
        out.reserveCapacity(24)
        func put(_ value: Int64, _ width: Int) {
            let digits = String(value)
            if digits.count < width { out += String(repeating: "0", count: width - digits.count) }
            out += digits
        }
        put(year, 4)
        out += "-"
        put(month, 2)
        out += "-"
        put(day, 2)
        out += "T"
        put(seconds / 3600, 2)
        out += ":"
        put(seconds / 60 % 60, 2)
        out += ":"
        put(seconds % 60, 2)
        out += "."
        put(rest % 1000, 3)
        out += "Z"
        return out
    }

    private static func parse(_ bytes: [UInt8]) -> Int64? {
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + width] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += width
            return value
        }
        func expect(_ allowed: [UInt8]) -> Bool {
            guard index < bytes.count, allowed.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect([45]), let month = number(2), expect([45]), let day = number(2),
            expect([84, 116, 32]), let hour = number(2), expect([58]), let minute = number(2), expect([58]),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var millis: Int64 = 0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 3 { millis = millis * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offset: Int64 = 0
        if expect([90, 122]) {
            offset = 0
        } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
            let sign: Int64 = bytes[index] == 45 ? -1 : 1
            index += 1
            guard let hours = number(2), expect([58]), let minutes = number(2), hours < 24, minutes < 60 else {
                return nil
            }
            offset = sign * (hours * 60 + minutes)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60 + min(second, 59)
        return (local - offset * 60) * 1000 + millis
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// UUID text as capture V1 needs it: validated and lowercased, or derived from another id.
package enum UUIDText {
    /// `text` as a lowercase 8-4-4-4-12 UUID, or nil when it is not one.
    package static func canonical(_ text: String) -> String? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == 45 else { return nil }
            } else {
                let isHex = (48...57).contains(byte) || (97...102).contains(byte | 0x20)
                guard isHex else { return nil }
            }
        }
        return text.lowercased()
    }

    /// A stable UUID (version 8, name-based) for an id that is not a UUID: the same id always gives the same
    /// UUID, so a resent event keeps it. Two FNV-1a-64 hashes with different offsets; uniqueness, not secrecy.
    package static func derived(from id: String) -> String {
        var high: UInt64 = 0xcbf2_9ce4_8422_2325
        var low: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in id.utf8 {
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            low = (low ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            low = low ^ (low >> 29)
        }
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_8000  // version 8
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // variant 10
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        let text = Array(hex(high) + hex(low))
        return String(text[0..<8]) + "-" + String(text[8..<12]) + "-" + String(text[12..<16]) + "-"
            + String(text[16..<20]) + "-" + String(text[20..<32])
    }
}
