@_exported import CohorlyJSON

/// The collector's JSON values are the client's (`CohorlyValue`, module CohorlyJSON): one parser and writer
/// for the whole package.
package typealias JSONValue = CohorlyValue
