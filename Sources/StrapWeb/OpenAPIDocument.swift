/// strapd-web's HTTP API as an OpenAPI 3.0 document, served at `GET /openapi.json` (behind the
/// token, like every path) and compiled in like the dashboard's files. OpenAPITests run
/// schemathesis with it against a real strapd-web and check that its paths are the routes
/// WebApp serves (docs/web.md, "The OpenAPI document"): edit it with the route it describes.
public enum OpenAPIDocument {
    public static let path = "/openapi.json"
    public static let contentType = "application/json"
    public static var bytes: [UInt8] { Array(json.utf8) }

    static let json = #"""
{
 "openapi": "3.0.3",
 "info": {
  "title": "strapd-web",
  "version": "1.0.0",
  "description": "strapd-web's HTTP API (docs/web.md). Every path needs the token: `Authorization: Bearer <token>` (scripts), or the session cookie a browser gets from the token URL. A POST or PUT with the cookie must also carry `Origin: http://<its Host>`; one with the bearer token may send no Origin, or ours. The Host header must be localhost, 127.0.0.1, [::1] or an --allow-host name. HEAD is answered like GET; another method on a path here is 405."
 },
 "servers": [{"url": "http://127.0.0.1:8420"}],
 "security": [{"bearer": []}, {"session": []}],
 "paths": {
\#(historyPaths)
\#(profilePaths)
\#(devicesPaths)
  "/api/status": {
   "get": {
    "operationId": "status",
    "summary": "strapd's status",
    "tags": ["read"],
    "responses": {
     "200": {"description": "strapd's answer", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}},
     \#(refusals(401, 403, 413, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/devices": {
   "get": {
    "operationId": "devicesList",
    "summary": "strapd's devices.list",
    "tags": ["read"],
    "responses": {
     "200": {"description": "strapd's answer", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeviceList"}}}},
     \#(refusals(401, 403, 413, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/sessions": {
   "get": {
    "operationId": "sessions",
    "summary": "the open workout sessions",
    "tags": ["read"],
    "responses": {
     "200": {"description": "strapd's answer", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionList"}}}},
     \#(refusals(401, 403, 413, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workout/start": {
   "post": {
    "operationId": "workoutStart",
    "summary": "workout.start: a new running session",
    "tags": ["workout"],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StartRequest"}}}},
    "responses": {
     "200": {"description": "strapd's answer, unchanged", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionInfo"}}}, "links": {"lap": {"operationId": "workoutLap", "requestBody": {"session": "$response.body#/session/session"}}, "pause": {"operationId": "workoutPause", "requestBody": {"session": "$response.body#/session/session"}}, "resume": {"operationId": "workoutResume", "requestBody": {"session": "$response.body#/session/session"}}, "end": {"operationId": "workoutEnd", "requestBody": {"session": "$response.body#/session/session"}}}},
     \#(refusals(400, 401, 403, 404, 409, 413, 415, 422, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workout/lap": {
   "post": {
    "operationId": "workoutLap",
    "summary": "workout.lap",
    "tags": ["workout"],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LapRequest"}}}},
    "responses": {
     "200": {"description": "strapd's answer, unchanged", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionInfo"}}}, "links": {"lap": {"operationId": "workoutLap", "requestBody": {"session": "$response.body#/session/session"}}, "pause": {"operationId": "workoutPause", "requestBody": {"session": "$response.body#/session/session"}}, "resume": {"operationId": "workoutResume", "requestBody": {"session": "$response.body#/session/session"}}, "end": {"operationId": "workoutEnd", "requestBody": {"session": "$response.body#/session/session"}}}},
     \#(refusals(400, 401, 403, 404, 409, 413, 415, 422, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workout/pause": {
   "post": {
    "operationId": "workoutPause",
    "summary": "workout.pause",
    "tags": ["workout"],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionRequest"}}}},
    "responses": {
     "200": {"description": "strapd's answer, unchanged", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionInfo"}}}, "links": {"lap": {"operationId": "workoutLap", "requestBody": {"session": "$response.body#/session/session"}}, "pause": {"operationId": "workoutPause", "requestBody": {"session": "$response.body#/session/session"}}, "resume": {"operationId": "workoutResume", "requestBody": {"session": "$response.body#/session/session"}}, "end": {"operationId": "workoutEnd", "requestBody": {"session": "$response.body#/session/session"}}}},
     \#(refusals(400, 401, 403, 404, 409, 413, 415, 422, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workout/resume": {
   "post": {
    "operationId": "workoutResume",
    "summary": "workout.resume",
    "tags": ["workout"],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionRequest"}}}},
    "responses": {
     "200": {"description": "strapd's answer, unchanged", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionInfo"}}}, "links": {"lap": {"operationId": "workoutLap", "requestBody": {"session": "$response.body#/session/session"}}, "pause": {"operationId": "workoutPause", "requestBody": {"session": "$response.body#/session/session"}}, "resume": {"operationId": "workoutResume", "requestBody": {"session": "$response.body#/session/session"}}, "end": {"operationId": "workoutEnd", "requestBody": {"session": "$response.body#/session/session"}}}},
     \#(refusals(400, 401, 403, 404, 409, 413, 415, 422, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workout/end": {
   "post": {
    "operationId": "workoutEnd",
    "summary": "workout.end: the session saved",
    "tags": ["workout"],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionRequest"}}}},
    "responses": {
     "200": {"description": "strapd's answer, unchanged", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EndResult"}}}},
     \#(refusals(400, 401, 403, 404, 409, 413, 415, 422, 500, 501, 502, 503, 504))
    }
   }
  },
  "/metrics": {
   "get": {
    "operationId": "metrics",
    "summary": "Prometheus text format 0.0.4 (docs/web.md, Metrics)",
    "tags": ["read"],
    "responses": {
     "200": {"description": "the exposition", "content": {"text/plain; version=0.0.4; charset=utf-8": {"schema": {"type": "string"}}}},
     "401": {"description": "no token: neither `Authorization: Bearer`, nor the session cookie", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "403": {"description": "a Host header not on the allow-list; the read-only overlay token, except on /events", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "413": {"description": "a request body over 64 KiB (once the token is checked)", "content": {"text/plain": {"schema": {"type": "string"}}}}
    }
   }
  },
  "/events": {
   "get": {
    "operationId": "events",
    "summary": "Server-Sent Events: strapd's live stream and workout.watch (docs/web.md, Live events). The stream does not end; it is not run by schemathesis. The read-only overlay token opens it too (as bearer or its cookie), filtered to heart-rate samples.",
    "tags": ["read"],
    "security": [{"bearer": []}, {"session": []}, {"overlay": []}],
    "responses": {
     "200": {"description": "`event: sample|device|link|dropped|workout.*` and `data: <one line of JSON>`", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
     "401": {"description": "no token: neither `Authorization: Bearer`, nor the session cookie", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "403": {"description": "a Host header not on the allow-list; the read-only overlay token, except on /events", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "413": {"description": "a request body over 64 KiB (once the token is checked)", "content": {"text/plain": {"schema": {"type": "string"}}}}
    }
   }
  },
  "/logout": {
   "post": {
    "operationId": "logout",
    "summary": "ends the browser's session: the cookie is cleared (a bearer request has none to end)",
    "tags": ["browser"],
    "responses": {
     "204": {"description": "the session is ended"},
     "401": {"description": "no token: neither `Authorization: Bearer`, nor the session cookie", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "403": {"description": "a Host not on the allow-list; a foreign Origin, or the cookie without an Origin", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "413": {"description": "a request body over 64 KiB (once the token is checked)", "content": {"text/plain": {"schema": {"type": "string"}}}}
    }
   }
  },
  "/openapi.json": {
   "get": {
    "operationId": "openapi",
    "summary": "this document",
    "tags": ["read"],
    "responses": {
     "200": {"description": "OpenAPI 3.0", "content": {"application/json": {"schema": {"type": "object"}}}},
     "401": {"description": "no token: neither `Authorization: Bearer`, nor the session cookie", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "403": {"description": "a Host header not on the allow-list; the read-only overlay token, except on /events", "content": {"text/plain": {"schema": {"type": "string"}}}},
     "413": {"description": "a request body over 64 KiB (once the token is checked)", "content": {"text/plain": {"schema": {"type": "string"}}}}
    }
   }
  }
 },
 "components": {
  "schemas": {
\#(historySchemas)
\#(profileSchemas)
\#(devicesSchemas)
   "Error": {
    "type": "object",
    "required": ["error"],
    "additionalProperties": false,
    "properties": {
     "error": {"type": "string", "description": "what was refused and why"},
     "code": {"type": "string", "enum": ["badRequest", "invalidOption", "notAuthorized", "notFound", "noData", "invalidTransition", "busy", "anchorExpired", "anchorAhead", "unknownOp", "unavailable", "internal"], "description": "strapd's error code, when strapd refused (docs/protocol.md, Error codes)"}
    }
   },
   "Status": {
    "type": "object",
    "description": "strapd's `status` result unchanged (docs/protocol.md, status)",
    "required": ["version", "startedAt", "mode", "summary", "degraded", "connectedSensors", "knownSensors", "sampleRate", "clients", "liveSubscribers", "followers", "pipeline", "store", "mqtt", "protocol"],
    "properties": {
     "version": {"type": "string"},
     "startedAt": {"type": "string", "format": "date-time"},
     "mode": {"type": "string", "enum": ["bluetooth", "simulate", "replay"]},
     "summary": {"type": "string"},
     "degraded": {"type": "string", "nullable": true},
     "connectedSensors": {"type": "integer", "minimum": 0},
     "knownSensors": {"type": "integer", "minimum": 0},
     "sampleRate": {"type": "number", "minimum": 0},
     "clients": {"type": "integer", "minimum": 0},
     "liveSubscribers": {"type": "integer", "minimum": 0},
     "followers": {"type": "integer", "minimum": 0, "description": "open samples.anchored and statistics.collection streams with follow"},
     "pipeline": {"type": "object", "required": ["events", "samples", "rejected", "dropped", "samplesByType"], "properties": {"events": {"type": "integer", "minimum": 0}, "samples": {"type": "integer", "minimum": 0}, "rejected": {"type": "integer", "minimum": 0}, "dropped": {"type": "integer", "minimum": 0}, "samplesByType": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}, "description": "of samples, how many of each quantity type (types with none left out)"}}},
     "store": {"type": "object", "required": ["oldestAnchor", "latestAnchor", "segments", "bytes", "degraded", "damage"], "properties": {"oldestAnchor": {"type": "integer", "minimum": 0}, "latestAnchor": {"type": "integer", "minimum": 0}, "segments": {"type": "integer", "minimum": 0}, "bytes": {"type": "integer", "minimum": 0}, "degraded": {"type": "string", "nullable": true}, "damage": {"type": "array"}}},
     "mqtt": {"type": "object", "nullable": true, "description": "null unless [mqtt] names a broker (docs/mqtt.md)", "required": ["state"], "properties": {"state": {"type": "string", "enum": ["connecting", "connected", "waiting", "stopped"]}, "broker": {"type": "string"}, "cursor": {"type": "integer"}, "lagItems": {"type": "integer"}, "lagSeconds": {"type": "number"}, "published": {"type": "integer"}, "acknowledged": {"type": "integer"}, "connects": {"type": "integer"}, "lastError": {"type": "string", "nullable": true}, "lastErrorAt": {"type": "string", "nullable": true, "format": "date-time"}, "retryIn": {"type": "number", "nullable": true}}},
     "protocol": {"type": "object", "required": ["version", "operations"], "properties": {"version": {"type": "string"}, "operations": {"type": "array", "items": {"type": "string"}}}}
    }
   },
   "DeviceList": {
    "type": "object",
    "required": ["devices"],
    "additionalProperties": false,
    "properties": {
     "devices": {"type": "array", "nullable": true, "maxItems": 16, "uniqueItems": true, "items": {"$ref": "#/components/schemas/Device"}}
    }
   },
   "Device": {
    "type": "object",
    "description": "one device of strapd's `devices.list`, unchanged (docs/protocol.md, devices.list)",
    "required": ["address", "known", "connected", "paired", "services", "notifications"],
    "properties": {
     "address": {"type": "string"},
     "name": {"type": "string", "nullable": true},
     "known": {"type": "boolean"},
     "connected": {"type": "boolean"},
     "paired": {"type": "boolean"},
     "services": {"type": "array", "items": {"type": "string"}},
     "battery": {"type": "integer", "nullable": true, "minimum": 0, "maximum": 100},
     "contact": {"type": "string", "nullable": true},
     "bodySensorLocation": {"type": "string", "nullable": true},
     "sensorLocation": {"type": "string", "nullable": true},
     "manufacturer": {"type": "string", "nullable": true},
     "model": {"type": "string", "nullable": true},
     "serial": {"type": "string", "nullable": true},
     "firmware": {"type": "string", "nullable": true},
     "rssi": {"type": "integer", "nullable": true},
     "rssiUnavailable": {"type": "string"},
     "lastSeen": {"type": "string", "nullable": true, "format": "date-time"},
     "lastDisconnectReason": {"type": "string", "nullable": true},
     "adapter": {"type": "string", "nullable": true},
     "adapterAddress": {"type": "string", "nullable": true},
     "notifications": {"type": "integer", "minimum": 0}
    }
   },
   "SessionList": {
    "type": "object",
    "required": ["sessions"],
    "additionalProperties": false,
    "properties": {
     "sessions": {"type": "array", "items": {"$ref": "#/components/schemas/SessionInfo"}, "description": "open sessions (state not ended), oldest first"}
    }
   },
   "SessionInfo": {
    "type": "object",
    "description": "a session as workout.get answers it (docs/protocol-workouts.md, Results)",
    "required": ["session", "statistics"],
    "properties": {
     "session": {"$ref": "#/components/schemas/Session"},
     "statistics": {"$ref": "#/components/schemas/Statistics"},
     "workout": {"$ref": "#/components/schemas/Workout"},
     "unknownDevices": {"type": "array", "items": {"type": "string"}, "description": "devices strapd has never seen; absent when every device is known"}
    }
   },
   "Session": {
    "type": "object",
    "required": ["session", "state", "configuration", "created", "deviceIDs", "events"],
    "properties": {
     "session": {"type": "string", "format": "uuid"},
     "state": {"type": "string", "enum": ["notStarted", "prepared", "running", "paused", "stopped", "ended"]},
     "configuration": {"$ref": "#/components/schemas/Configuration"},
     "created": {"type": "string", "format": "date-time"},
     "start": {"type": "string", "format": "date-time"},
     "stop": {"type": "string", "format": "date-time"},
     "end": {"type": "string", "format": "date-time"},
     "deviceIDs": {"type": "array", "items": {"type": "string"}},
     "events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}}
    }
   },
   "Configuration": {
    "type": "object",
    "required": ["activityType", "locationType", "athlete", "deviceIDs", "metadata"],
    "properties": {
     "activityType": {"$ref": "#/components/schemas/ActivityType"},
     "locationType": {"$ref": "#/components/schemas/LocationType"},
     "athlete": {"type": "string"},
     "deviceIDs": {"type": "array", "items": {"type": "string"}},
     "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
     "plan": {"type": "string", "format": "uuid"}
    }
   },
   "Event": {
    "type": "object",
    "required": ["kind"],
    "properties": {
     "kind": {"type": "string", "enum": ["pause", "resume", "lap", "marker"]}
    }
   },
   "Statistics": {
    "type": "object",
    "description": "LiveStatistics (docs/workouts.md); absent figures are absent",
    "required": ["session", "state", "elapsedTime", "laps"],
    "properties": {
     "session": {"type": "string", "format": "uuid"},
     "state": {"type": "string"},
     "time": {"type": "string", "format": "date-time"},
     "start": {"type": "string", "format": "date-time"},
     "elapsedTime": {"type": "number", "minimum": 0},
     "heartRateMostRecent": {"type": "number"},
     "heartRateAverage": {"type": "number"},
     "laps": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["index", "start"], "properties": {"index": {"type": "integer", "minimum": 1}, "start": {"type": "string", "format": "date-time"}, "end": {"type": "string", "format": "date-time"}}}}
    }
   },
   "Workout": {
    "type": "object",
    "description": "the saved workout (docs/workouts.md, The saved workout)",
    "required": ["uuid", "anchor", "type", "sessionID", "athlete", "activityType", "locationType", "deviceIDs", "start", "end", "events", "laps", "summary"],
    "properties": {
     "uuid": {"type": "string", "format": "uuid"},
     "anchor": {"type": "integer", "minimum": 1},
     "type": {"type": "string", "enum": ["workout"]},
     "sessionID": {"type": "string", "format": "uuid"},
     "athlete": {"type": "string"},
     "activityType": {"$ref": "#/components/schemas/ActivityType"},
     "locationType": {"$ref": "#/components/schemas/LocationType"},
     "deviceIDs": {"type": "array", "items": {"type": "string"}},
     "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
     "start": {"type": "string", "format": "date-time"},
     "end": {"type": "string", "format": "date-time"},
     "events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}},
     "laps": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["start", "end", "summary"]}},
     "summary": {"type": "object", "additionalProperties": {"type": "number"}},
     "info": {"type": "object", "additionalProperties": {"type": "string"}}
    }
   },
   "EndResult": {
    "type": "object",
    "required": ["workout"],
    "properties": {
     "workout": {"$ref": "#/components/schemas/Workout"}
    }
   },
   "ActivityType": {
    "type": "string",
    "enum": ["running", "cycling", "walking", "hiking", "rowing", "elliptical", "stairClimbing", "swimming", "crossTraining", "mixedCardio", "highIntensityIntervalTraining", "functionalStrengthTraining", "traditionalStrengthTraining", "coreTraining", "jumpRope", "stepTraining", "dance", "yoga", "crossCountrySkiing", "skatingSports", "paddleSports", "handCycling", "wheelchairRunPace", "wheelchairWalkPace", "cooldown", "other"],
    "description": "HealthKit's names (docs/workouts.md); strapd refuses another with invalidOption (422)"
   },
   "LocationType": {
    "type": "string",
    "enum": ["indoor", "outdoor", "unknown"]
   },
   "StartRequest": {
    "type": "object",
    "required": ["activityType"],
    "additionalProperties": true,
    "example": {"activityType": "cycling", "locationType": "indoor"},
    "description": "workout.start's parameters (docs/protocol-workouts.md). Members not listed are ignored; null is taken as absent.",
    "properties": {
     "activityType": {"$ref": "#/components/schemas/ActivityType"},
     "locationType": {"type": "string", "nullable": true, "enum": ["indoor", "outdoor", "unknown", null], "description": "default unknown"},
     "devices": {"type": "array", "nullable": true, "maxItems": 16, "uniqueItems": true, "items": {"type": "string", "pattern": "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"}, "description": "Bluetooth addresses (another string is strapd's badRequest, 400); absent or empty: every connected device no other session holds (409 when there is none). An address strapd never saw is taken and listed in unknownDevices. At most 16, each once, whatever its case (strapd's invalidOption, 422)."},
     "athlete": {"type": "string", "nullable": true, "minLength": 1, "maxLength": 64, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]+$", "description": "1 to 64 bytes of UTF-8 (so fewer characters when some take more than a byte) without control characters (Unicode's Cc) (strapd's invalidOption, 422, otherwise); default `default`"},
     "metadata": {"type": "object", "nullable": true, "additionalProperties": {"type": "string"}, "maxProperties": 16, "description": "non-empty keys, at most 4096 bytes of keys and values (strapd's invalidOption, 422, otherwise)"}
    }
   },
   "SessionRequest": {
    "type": "object",
    "required": ["session"],
    "additionalProperties": true,
    "description": "Members not listed are ignored, except metadata, which only lap takes (400 here, unless null).",
    "properties": {
     "session": {"type": "string", "format": "uuid"}
    }
   },
   "LapRequest": {
    "type": "object",
    "required": ["session"],
    "additionalProperties": true,
    "description": "Members not listed are ignored; a null metadata is taken as absent.",
    "properties": {
     "session": {"type": "string", "format": "uuid"},
     "metadata": {"type": "object", "nullable": true, "additionalProperties": {"type": "string"}, "maxProperties": 16}
    }
   }
  },
  "responses": {
   "E400": {
    "description": "the body is not JSON, not an object, lacks a required member or has one of the wrong type, a session that is no UUID, metadata on anything but lap (strapd is not asked); or strapd's badRequest",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E401": {
    "description": "no token: neither `Authorization: Bearer`, nor the session cookie",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E403": {
    "description": "a Host header not on the allow-list; a POST or PUT from a foreign Origin, or with the cookie and no Origin; the read-only overlay token (it opens only the overlay and /events); or strapd's notAuthorized (strapd-web's user lacks the grant)",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E404": {
    "description": "strapd's notFound or noData: no such session or workout; an athlete without a profile",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E409": {
    "description": "strapd's invalidTransition (the session's state does not allow it) or busy (a device held by another session, 64 sessions open, the session being saved)",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E415": {
    "description": "the body's Content-Type is not application/json",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E422": {
    "description": "strapd's invalidOption: an unknown activityType or locationType, oversized metadata, a bad athlete name; a profile field that is unknown or breaks its rule",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E500": {
    "description": "strapd's internal: a bug in strapd",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E501": {
    "description": "strapd's unknownOp: a strapd older than the operation",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E502": {
    "description": "strapd is not running, went away, or answered something unreadable",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E503": {
    "description": "strapd's unavailable: the session journal cannot be written (store degraded)",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E504": {
    "description": "strapd did not answer within 5 s; whether a command took effect is unknown",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   },
   "E413": {
    "description": "a request body over 64 KiB (once the token is checked)",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
   }
  },
  "securitySchemes": {
   "bearer": {
    "type": "http",
    "scheme": "bearer",
    "description": "the token: 64 hexadecimal digits from strapd-web's state directory (the file `token`)"
   },
   "overlay": {
    "type": "apiKey",
    "in": "cookie",
    "name": "strapd_web_overlay",
    "description": "set by opening the overlay URL (the read-only overlay token); it opens /overlay and /events only (docs/web.md, The overlay token)"
   },
   "session": {
    "type": "apiKey",
    "in": "cookie",
    "name": "strapd_web_session",
    "description": "set by opening the token URL (`?token=`, answered 303); a POST with it also needs our Origin"
   }
  }
 }
}
"""#
}
