/// The athlete profile's part of the OpenAPI document (docs/web.md, "The profile API"),
/// spliced into `OpenAPIDocument.json`'s paths and schemas.
extension OpenAPIDocument {
    static let profilePaths = #"""
  "/api/profile": {
   "get": {
    "operationId": "profileGet",
    "summary": "profile.get: the athlete's profile, its maximum heart rate (estimated when unset) and age, unchanged",
    "tags": ["read"],
    "parameters": [\#(athleteParameter)],
    "responses": {
     "200": {"description": "strapd's answer", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Profile"}}}},
     \#(refusals(400, 401, 403, 404, 413, 422, 500, 501, 502, 503, 504))
    }
   },
   "put": {
    "operationId": "profileSet",
    "summary": "profile.set: the fields in the body changed (null clears one); strapd validates the merged profile and changes nothing when it refuses",
    "tags": ["profile"],
    "parameters": [\#(athleteParameter)],
    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProfileFields"}}}},
    "responses": {
     "200": {"description": "strapd's answer: the whole profile", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Profile"}}}},
     \#(refusals(400, 401, 403, 404, 413, 415, 422, 500, 501, 502, 503, 504))
    }
   }
  },
"""#

    static let athleteParameter = #"""
{"name": "athlete", "in": "query", "required": false, "schema": {"type": "string"}, "description": "the profile's name (strapd's default: default)"}
"""#

    static let profileSchemas = #"""
   "Profile": {
    "type": "object",
    "description": "strapd's profile answer (docs/protocol-workouts.md, profile.get and profile.set)",
    "required": ["athlete", "profile"],
    "properties": {
     "athlete": {"type": "string"},
     "profile": {"type": "object"},
     "maximumHeartRate": {"type": "object"},
     "age": {"type": "number"}
    }
   },
   "ProfileFields": {
    "type": "object",
    "description": "the fields to change, as profile.set takes them: dateOfBirth, biologicalSex, weight, height, restingHeartRate, maximumHeartRate, lactateThresholdHeartRate, vo2Max, heartRateZones, devices, functionalThresholdPower; strapd checks names, types and ranges (422 naming the field and the rule)",
    "additionalProperties": true
   },
"""#
}
