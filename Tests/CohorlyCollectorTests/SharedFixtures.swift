// The debug-file fixtures (SplitProgram, FixtureError, contents) live in Tests/DebugFileFixtures, shared with
// CohorlyUploadTests; exported here, every file of this target sees them.
@_exported import DebugFileFixtures
