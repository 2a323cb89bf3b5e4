import Foundation
import Testing

@testable import CohorlySymbols

/// The JSON of a symbolicated crash (`cohorly symbolicate --json`, the collector's `crash` object) is read into the
/// crash model and written back byte for byte: every key, its spelling and its form as before the model carried
/// the symbols.
@Suite struct SymbolicatedCrashJSONTests {
    static let json = #"""
        {
          "complete" : true,
          "executable" : "/app/Shop",
          "handled" : false,
          "mechanism" : "swift_fatal",
          "modules_without_debug_info" : [
            {
              "build_id" : "b521f25fdeacf504eca83d97c7308e8fc11be729",
              "error" : "no debug file found: symbol names only",
              "path" : "/usr/lib/libswiftCore.so"
            }
          ],
          "reason" : "Fatal error: Unexpectedly found nil while unwrapping an Optional value",
          "reason_source" : "message",
          "signal" : {
            "address" : "0x7fe40056df7f",
            "code" : 2,
            "name" : "SIGILL",
            "number" : 4
          },
          "threads" : [
            {
              "async_anchor" : 1,
              "async_frames" : [
                {
                  "file_address" : "0x384e00",
                  "image_addr" : "0x55c49b6ee000",
                  "in_app" : true,
                  "index" : 0,
                  "instruction_addr" : "0x55c49ba72e00",
                  "kind" : "async_resume",
                  "module" : "/app/Shop",
                  "symbols" : [
                    {
                      "column" : 0,
                      "file" : "/src/Shop/Orders.swift",
                      "function" : "Shop.level2()",
                      "inlined" : false,
                      "line" : 81,
                      "raw_function" : "$s4Shop6level2yyYaF"
                    }
                  ]
                }
              ],
              "async_stop" : "fault",
              "crashed" : true,
              "frames" : [
                {
                  "file_address" : "0x16df7f",
                  "image_addr" : "0x7fe400400000",
                  "in_app" : false,
                  "index" : 0,
                  "instruction_addr" : "0x7fe40056df7f",
                  "kind" : "pc",
                  "module" : "/usr/lib/libswiftCore.so",
                  "symbols" : [
                    {
                      "column" : 0,
                      "file" : "Swift.o",
                      "function" : "Swift._assertionFailure()",
                      "inlined" : false,
                      "line" : 0,
                      "raw_function" : "$ss17_assertionFailure",
                      "symbol_offset" : 623
                    }
                  ]
                },
                {
                  "file_address" : "0x384c29",
                  "image_addr" : "0x55c49b6ee000",
                  "in_app" : true,
                  "index" : 1,
                  "instruction_addr" : "0x55c49ba72c2a",
                  "kind" : "return_address",
                  "module" : "/app/Shop",
                  "symbols" : [

                  ]
                },
                {
                  "index" : 2,
                  "instruction_addr" : "0x10",
                  "kind" : "return_address",
                  "symbols" : [

                  ]
                }
              ],
              "name" : "Swift global concurrent queue",
              "tid" : 3550,
              "truncated" : false
            },
            {
              "crashed" : false,
              "frames" : [

              ],
              "truncated" : true
            }
          ],
          "unsymbolicated_modules" : [
            {
              "error" : "cannot open",
              "path" : "/app/Plugin.so"
            }
          ]
        }
        """#

    @Test func theJSONReadsIntoTheModelAndWritesBackByteForByte() throws {
        let crash = try JSONDecoder().decode(SymbolicatedCrash.self, from: Data(Self.json.utf8))
        let thread = try #require(crash.threads.first)
        #expect(thread.frames[1].lookup?.fileAddress == 0x384c29)
        #expect(thread.frames[2].lookup?.imagePath == nil && thread.async?.anchor == 1)
        #expect(crash.exception.facts.signal?.number == 4 && crash.exception.executable == "/app/Shop")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: try encoder.encode(crash), as: UTF8.self) == Self.json)
    }
}
