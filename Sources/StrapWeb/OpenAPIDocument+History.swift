/// The history API's part of the OpenAPI document (docs/web.md, "The history API"), spliced
/// into `OpenAPIDocument.json`'s paths and schemas.
extension OpenAPIDocument {
    static let historyPaths = #"""
  "/api/workouts": {
   "get": {
    "operationId": "workoutsList",
    "summary": "the saved workouts, newest first: workout.list's workouts, unchanged",
    "tags": ["read"],
    "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 10000}, "description": "at most this many (strapd's default: 100)"}],
    "responses": {
     "200": {"description": "strapd's answer", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WorkoutList"}}}},
     \#(refusals(400, 401, 403, 413, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workouts/{id}": {
   "get": {
    "operationId": "workoutGet",
    "summary": "one saved workout as workout.get gives it (summary, laps, zone times, HRV), and its stored heart-rate samples",
    "tags": ["read"],
    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "the saved workout's UUID, or its session's"}],
    "responses": {
     "200": {"description": "strapd's workout and the store's heart-rate samples", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WorkoutDetail"}}}},
     \#(refusals(401, 403, 404, 413, 500, 501, 502, 503, 504))
    }
   }
  },
  "/api/workouts/{id}/export": {
   "get": {
    "operationId": "workoutExport",
    "summary": "workout.export: the file strapd makes, streamed, as an attachment",
    "tags": ["read"],
    "parameters": [
     {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "the saved workout's UUID, or its session's"},
     {"name": "format", "in": "query", "required": false, "schema": {"type": "string", "enum": ["fit", "tcx", "csv"], "default": "fit"}}
    ],
    "responses": {
     "200": {"description": "the file's bytes, exactly strapd's (Content-Length is its size; Content-Disposition: attachment)", "content": {"application/vnd.ant.fit": {"schema": {"type": "string", "format": "binary"}}, "application/vnd.garmin.tcx+xml": {"schema": {"type": "string", "format": "binary"}}, "text/csv": {"schema": {"type": "string", "format": "binary"}}}},
     \#(refusals(400, 401, 403, 404, 413, 422, 500, 501, 502, 503, 504))
    }
   }
  },
"""#

    static let historySchemas = #"""
   "SavedWorkout": {
    "type": "object",
    "description": "a saved workout as strapd stores it (docs/workouts.md): summary figures, laps, events, zone and HRV figures in its summary",
    "required": ["uuid", "activityType", "start", "end"],
    "properties": {
     "uuid": {"type": "string"},
     "sessionID": {"type": "string"},
     "activityType": {"type": "string"},
     "start": {"type": "string", "format": "date-time"},
     "end": {"type": "string", "format": "date-time"},
     "summary": {"type": "object"},
     "laps": {"type": "array", "items": {"type": "object"}},
     "events": {"type": "array", "items": {"type": "object"}}
    }
   },
   "WorkoutList": {
    "type": "object",
    "required": ["workouts"],
    "additionalProperties": false,
    "properties": {"workouts": {"type": "array", "items": {"$ref": "#/components/schemas/SavedWorkout"}}}
   },
   "WorkoutDetail": {
    "type": "object",
    "required": ["workout", "heartRate"],
    "additionalProperties": false,
    "properties": {
     "workout": {"$ref": "#/components/schemas/SavedWorkout"},
     "heartRate": {
      "type": "object",
      "required": ["count", "samples"],
      "properties": {
       "count": {"type": "integer", "minimum": 0},
       "samples": {"type": "array", "description": "every heart-rate sample the store holds for the workout, one each", "items": {"type": "object", "required": ["start", "value"], "properties": {"start": {"type": "string", "format": "date-time"}, "value": {"type": "number"}}}}
      }
     }
    }
   },
"""#

    /// A response object's refusals: one `"NNN": {"$ref": "#/components/responses/ENNN"}` per
    /// code, comma-separated (the caller writes the comma after the last one, if any). Every
    /// operation refuses with the same shapes; the document names them once, in components.
    static func refusals(_ codes: Int...) -> String {
        codes.map { ##""\##($0)": {"$ref": "#/components/responses/E\##($0)"}"## }.joined(separator: ",\n     ")
    }
}
