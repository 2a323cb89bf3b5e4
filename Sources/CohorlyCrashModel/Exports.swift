@_exported import CohorlyJSON
