/// The devices page's part of the OpenAPI document (docs/web.md, "The devices API"), spliced
/// into `OpenAPIDocument.json`'s paths and schemas. Scan, pair and forget need strapd's
/// `admin` grant, which the packaged strapd-web lacks: strapd's refusal is the 403.
extension OpenAPIDocument {
    static let devicesPaths = #"""
  "/api/access": {
   "get": {
    "operationId": "accessStatus",
    "summary": "access.status: what strapd lets strapd-web do (its grants and every operation), unchanged",
    "tags": ["read"],
    "responses": {
     "200": {"description": "strapd's answer", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AccessStatus"}}}},
     \#(refusals(401, 403, 413, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/devices/scan": {
   "post": {
    "operationId": "devicesScan",
    "summary": "devices.scan: discovers devices for timeout seconds and answers then, each device found once (needs strapd's admin grant)",
    "tags": ["devices"],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ScanRequest"}}}},
    "responses": {
     "200": {"description": "the devices found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ScanResult"}}}},
     "400": {"description": "the body is not a JSON object, or its timeout is not a number in (0, 5]", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "409": {"description": "strapd's busy: another client's scan is running (one adapter-wide discovery)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "503": {"description": "strapd's unavailable: no Bluetooth adapter, bluetoothd not running", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     \#(refusals(401, 403, 413, 415, 500, 501, 502, 504))
    }
   }
  },
\#(deviceCommandPath("pair", "devicesPair", "devices.pair: pairs (bonds) with the device and marks it trusted; the device must be known to BlueZ (scan first)"))
\#(deviceCommandPath("forget", "devicesForget", "devices.forget: disconnects the device, removes it from BlueZ and forgets it"))
"""#

    static func deviceCommandPath(_ action: String, _ operationId: String, _ summary: String) -> String {
        #"""
  "/api/devices/{address}/\#(action)": {
   "post": {
    "operationId": "\#(operationId)",
    "summary": "\#(summary) (needs strapd's admin grant); answered once strapd completed it",
    "tags": ["devices"],
    "parameters": [{"name": "address", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"}, "description": "the device's Bluetooth address; another string is strapd's badRequest (400)"}],
    "responses": {
     "200": {"description": "done", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeviceAction"}}}},
     "400": {"description": "strapd's badRequest: the address is not a Bluetooth address", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "404": {"description": "strapd's notFound: a device strapd (or BlueZ) does not know", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "409": {"description": "strapd's busy: another operation on the device is in progress", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "500": {"description": "strapd's internal: BlueZ or the sensor refused (the message names the org.bluez.Error)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "503": {"description": "strapd's unavailable: no adapter, bluetoothd not running, no system bus", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     \#(refusals(401, 403, 413, 501, 502, 504))
    }
   }
  },
"""#
    }

    static let devicesSchemas = #"""
   "AccessStatus": {
    "type": "object",
    "description": "strapd's access.status result unchanged (docs/protocol.md, access.status)",
    "required": ["peer", "grants", "operations", "types"],
    "properties": {
     "peer": {"type": "object", "properties": {"uid": {"type": "integer"}, "gid": {"type": "integer"}, "pid": {"type": "integer"}}},
     "grants": {"type": "object", "required": ["read", "record", "admin"], "properties": {"read": {"type": "string", "enum": ["all", "none", "limited"]}, "record": {"type": "boolean"}, "admin": {"type": "boolean"}}},
     "operations": {"type": "object", "additionalProperties": {"type": "boolean"}},
     "types": {"type": "object", "additionalProperties": {"type": "boolean"}}
    }
   },
   "ScanRequest": {
    "type": "object",
    "additionalProperties": true,
    "description": "Members not listed are ignored; a null timeout is taken as absent.",
    "properties": {
     "timeout": {"type": "number", "nullable": true, "exclusiveMinimum": true, "minimum": 0, "maximum": 5, "description": "seconds, default 5; the answer comes when the scan ends"}
    }
   },
   "ScanResult": {
    "type": "object",
    "required": ["timeout", "devices"],
    "additionalProperties": false,
    "properties": {
     "timeout": {"type": "number"},
     "devices": {"type": "array", "items": {"type": "object", "required": ["address", "name", "rssi", "services"], "additionalProperties": false, "properties": {"address": {"type": "string"}, "name": {"type": "string", "nullable": true, "description": "as advertised: any text"}, "rssi": {"type": "integer", "nullable": true}, "services": {"type": "array", "items": {"type": "string"}}}}}
    }
   },
   "DeviceAction": {
    "type": "object",
    "required": ["address", "action"],
    "additionalProperties": false,
    "properties": {
     "address": {"type": "string"},
     "action": {"type": "string", "enum": ["pair", "forget"]}
    }
   },
"""#
}
