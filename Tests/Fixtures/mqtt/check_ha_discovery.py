#!/usr/bin/env python3
"""Checks Home Assistant MQTT discovery configs against what Home Assistant accepts.

    check_ha_discovery.py FILE [--prefix homeassistant]

FILE: a JSON object {topic: payload_text, ...}, as retained on the broker. An empty payload
removes an entity and is counted, not checked. Prints on stdout one JSON line
{"entities": N, "removed": M, "components": {"sensor": n, ...}} and each complaint on stderr
("topic: what is wrong"). Exit 0 all valid, 1 any complaint, 2 unreadable FILE.

Rules, written down from Home Assistant's documentation (integrations/mqtt "discovery",
sensor.mqtt, binary_sensor.mqtt, integrations/sensor "device class") and its source,
home-assistant/core (dev branch, 2025): homeassistant/components/mqtt/abbreviations.py,
mqtt/sensor.py (DISCOVERY_SCHEMA, validate_sensor_state_and_device_class_config),
mqtt/binary_sensor.py, sensor/const.py (DEVICE_CLASS_UNITS, DEVICE_CLASS_STATE_CLASSES),
binary_sensor/__init__.py (BinarySensorDeviceClass) and homeassistant/const.py (UnitOf*).
Home Assistant drops a discovered sensor whose unit does not fit its device class; a state
class that does not fit only logs a warning, but it is refused here too. strapd's own
rules on top: unique_id, a device with identifiers and availability are required, and a
binary_sensor with a value_template must say payload_on and payload_off.
"""
import argparse
import json
import re
import sys

# mqtt/abbreviations.py: the abbreviations that can occur in sensor/binary_sensor configs.
ABBREVIATIONS = {
    "avty": "availability", "avty_mode": "availability_mode", "avty_t": "availability_topic",
    "avty_tpl": "availability_template", "pl_avail": "payload_available",
    "pl_not_avail": "payload_not_available", "dev": "device", "dev_cla": "device_class",
    "e": "encoding", "en": "enabled_by_default", "ent_cat": "entity_category",
    "ent_pic": "entity_picture", "exp_aft": "expire_after", "frc_upd": "force_update",
    "ic": "icon", "json_attr_t": "json_attributes_topic",
    "json_attr_tpl": "json_attributes_template", "lrst_val_tpl": "last_reset_value_template",
    "o": "origin", "obj_id": "object_id", "off_dly": "off_delay", "ops": "options",
    "p": "platform", "pl_off": "payload_off", "pl_on": "payload_on", "stat_cla": "state_class",
    "stat_t": "state_topic", "sug_dsp_prc": "suggested_display_precision",
    "uniq_id": "unique_id", "unit_of_meas": "unit_of_measurement", "val_tpl": "value_template",
}
DEVICE_ABBREVIATIONS = {
    "cns": "connections", "cu": "configuration_url", "ids": "identifiers", "mf": "manufacturer",
    "mdl": "model", "mdl_id": "model_id", "hw": "hw_version", "sw": "sw_version",
    "sn": "serial_number", "sa": "suggested_area", "via_device": "via_device", "name": "name",
}
DEVICE_KEYS = set(DEVICE_ABBREVIATIONS.values())
ORIGIN_ABBREVIATIONS = {"sw": "sw_version", "url": "support_url", "name": "name"}
AVAILABILITY_ABBREVIATIONS = {"t": "topic", "pl_avail": "payload_available",
                              "pl_not_avail": "payload_not_available", "val_tpl": "value_template"}

# mqtt/schemas.py MQTT_ENTITY_COMMON_SCHEMA + MQTT_AVAILABILITY_SCHEMA + config.py MQTT_RO_SCHEMA.
COMMON_KEYS = {
    "~", "availability", "availability_mode", "availability_template", "availability_topic",
    "payload_available", "payload_not_available", "device", "enabled_by_default",
    "entity_category", "entity_picture", "icon", "json_attributes_topic",
    "json_attributes_template", "object_id", "default_entity_id", "unique_id", "name",
    "encoding", "qos", "state_topic", "value_template", "origin", "platform",
}
COMPONENT_KEYS = {
    "sensor": COMMON_KEYS | {"device_class", "expire_after", "force_update",
                             "last_reset_value_template", "options",
                             "suggested_display_precision", "state_class",
                             "unit_of_measurement"},
    "binary_sensor": COMMON_KEYS | {"device_class", "expire_after", "force_update",
                                    "off_delay", "payload_on", "payload_off"},
}

# binary_sensor/__init__.py BinarySensorDeviceClass.
BINARY_SENSOR_DEVICE_CLASSES = {
    "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door",
    "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy",
    "opening", "plug", "power", "presence", "problem", "running", "safety", "smoke", "sound",
    "tamper", "update", "vibration", "window",
}

# const.py unit enums, as far as DEVICE_CLASS_UNITS below uses them.
ENERGY = {"J", "kJ", "MJ", "GJ", "mWh", "Wh", "kWh", "MWh", "GWh", "TWh",
          "cal", "kcal", "Mcal", "Gcal"}  # calories since HA 2024.10
LENGTH = {"mm", "cm", "m", "km", "in", "ft", "yd", "mi", "nmi"}
SPEED = {"Beaufort", "ft/s", "in/s", "m/s", "km/h", "kn", "mph", "mm/s"}
VOLUMETRIC_FLUX = {"in/d", "in/h", "mm/d", "mm/h"}
PRESSURE = {"Pa", "hPa", "kPa", "bar", "cbar", "mbar", "mmHg", "inHg", "psi"}
VOLUME = {"ft³", "CCF", "m³", "L", "mL", "gal", "fl. oz."}
UG_M3 = {"µg/m³"}
ANY = None  # unit not checked (monetary: any ISO 4217 code)

# sensor/const.py DEVICE_CLASS_UNITS ({None}: no unit allowed) and DEVICE_CLASS_STATE_CLASSES
# (M measurement, T total, I total_increasing). Non-numeric classes take neither.
M, T, I = "measurement", "total", "total_increasing"
ALL_STATE = {M, T, I}
SENSOR_DEVICE_CLASSES = {
    # device_class: (units, state classes)
    "date": ({None}, set()), "enum": ({None}, set()), "timestamp": ({None}, set()),
    "apparent_power": ({"VA"}, {M}), "aqi": ({None}, {M}),
    "area": ({"m²", "cm²", "km²", "mm²", "in²", "ft²", "yd²", "mi²", "ac", "ha"}, ALL_STATE),
    "atmospheric_pressure": (PRESSURE, {M}), "battery": ({"%"}, {M}),
    "blood_glucose_concentration": ({"mg/dL", "mmol/L"}, {M}),
    "carbon_monoxide": ({"ppm"}, {M}), "carbon_dioxide": ({"ppm"}, {M}),
    "conductivity": ({"S/cm", "mS/cm", "µS/cm", "μS/cm"}, {M}), "current": ({"A", "mA"}, {M}),
    "data_rate": (ANY, {M}), "data_size": (ANY, ALL_STATE),  # many units; not checked
    "distance": (LENGTH, ALL_STATE), "duration": ({"d", "h", "min", "s", "ms"}, ALL_STATE),
    "energy": (ENERGY, {T, I}), "energy_distance": ({"kWh/100km", "mi/kWh", "km/kWh"}, {M}),
    "energy_storage": (ENERGY, {M}), "frequency": ({"Hz", "kHz", "MHz", "GHz"}, {M}),
    "gas": ({"CCF", "ft³", "m³"}, {T, I}), "humidity": ({"%"}, {M}),
    "illuminance": ({"lx"}, {M}), "irradiance": ({"W/m²", "BTU/(h⋅ft²)"}, {M}),
    "moisture": ({"%"}, {M}), "monetary": (ANY, {T}),
    "nitrogen_dioxide": (UG_M3, {M}), "nitrogen_monoxide": (UG_M3, {M}),
    "nitrous_oxide": (UG_M3, {M}), "ozone": (UG_M3, {M}), "ph": ({None}, {M}),
    "pm1": (UG_M3, {M}), "pm10": (UG_M3, {M}), "pm25": (UG_M3, {M}),
    "power_factor": ({"%", None}, {M}), "power": ({"mW", "W", "kW", "MW", "GW", "TW"}, {M}),
    "precipitation": ({"cm", "in", "mm"}, ALL_STATE),
    "precipitation_intensity": (VOLUMETRIC_FLUX, {M}), "pressure": (PRESSURE, {M}),
    "reactive_power": ({"var", "kvar"}, {M}), "signal_strength": ({"dB", "dBm"}, {M}),
    "sound_pressure": ({"dB", "dBA"}, {M}), "speed": (SPEED | VOLUMETRIC_FLUX, {M}),
    "sulphur_dioxide": (UG_M3, {M}), "temperature": ({"°C", "°F", "K"}, {M}),
    "temperature_delta": ({"°C", "°F", "K"}, {M}),
    "volatile_organic_compounds": (UG_M3, {M}),
    "volatile_organic_compounds_parts": ({"ppm", "ppb"}, {M}), "voltage": (
        {"µV", "μV", "mV", "V", "kV", "MV"}, {M}),
    "volume": (VOLUME, {T, I}), "volume_storage": (VOLUME, {M}),
    "volume_flow_rate": ({"m³/h", "ft³/min", "L/min", "gal/min", "mL/s"}, {M}),
    "water": ({"CCF", "ft³", "m³", "gal", "L"}, {T, I}),
    "weight": ({"µg", "μg", "mg", "g", "kg", "oz", "lb", "st"}, ALL_STATE),
    "wind_direction": ({"°"}, set()), "wind_speed": (SPEED, {M}),
}

# mqtt/discovery.py TOPIC_MATCHER, applied after the discovery prefix.
TOPIC = re.compile(r"(?P<component>\w+)/(?:(?P<node_id>[a-zA-Z0-9_-]+)/)?"
                   r"(?P<object_id>[a-zA-Z0-9_-]+)/config")


def expand(d: dict, table: dict, where: str, complain) -> dict:
    out = {}
    for k, v in d.items():
        full = table.get(k, k)
        if full in out:
            complain(f"{where}{full} given twice (abbreviated and in full)")
        out[full] = v
    return out


def valid_topic(t) -> bool:
    return isinstance(t, str) and t != "" and "+" not in t and "#" not in t and "\0" not in t


def check(topic: str, cfg: dict, component: str, complain) -> None:
    cfg = expand(cfg, ABBREVIATIONS, "", complain)
    base = cfg.get("~")
    if base is not None:  # HA substitutes "~" at either end of every *_topic value
        for k, v in list(cfg.items()):
            if k.endswith("_topic") and isinstance(v, str):
                cfg[k] = base + v[1:] if v.startswith("~") else v[:-1] + base if v.endswith("~") else v
    for k in sorted(set(cfg) - COMPONENT_KEYS[component]):
        complain(f"unknown key {k!r} for {component}")

    if not valid_topic(cfg.get("state_topic")):
        complain("state_topic missing or not a valid topic name")
    if not isinstance(cfg.get("unique_id"), str) or not cfg["unique_id"]:
        complain("unique_id missing")
    if "qos" in cfg and cfg["qos"] not in (0, 1, 2):
        complain(f"qos {cfg['qos']!r} not 0, 1 or 2")
    if "name" in cfg and cfg["name"] is not None and not isinstance(cfg["name"], str):
        complain("name must be a string or null")
    for k in ("expire_after", "off_delay", "suggested_display_precision"):
        if k in cfg and (not isinstance(cfg[k], int) or isinstance(cfg[k], bool) or cfg[k] < 0):
            complain(f"{k} must be a non-negative integer")
    for k in ("force_update", "enabled_by_default"):
        if k in cfg and not isinstance(cfg[k], bool):
            complain(f"{k} must be a boolean")
    cat = cfg.get("entity_category")
    if cat is not None and cat not in ("diagnostic", "config"):
        complain(f"entity_category {cat!r} not diagnostic/config")
    if cat == "config" and component in ("sensor", "binary_sensor"):
        complain(f"entity_category config is not allowed for a {component}")

    # Availability: the documented choice is one or the other, never both.
    if "availability" in cfg and "availability_topic" in cfg:
        complain("availability and availability_topic must not be used together")
    elif "availability_topic" in cfg:
        if not valid_topic(cfg["availability_topic"]):
            complain("availability_topic is not a valid topic name")
    elif "availability" in cfg:
        av = cfg["availability"]
        if not isinstance(av, list) or not av:
            complain("availability must be a non-empty list")
        else:
            for i, e in enumerate(av):
                e = expand(e, AVAILABILITY_ABBREVIATIONS, f"availability[{i}].", complain) \
                    if isinstance(e, dict) else {}
                if not valid_topic(e.get("topic")):
                    complain(f"availability[{i}] has no valid topic")
    else:
        complain("no availability_topic nor availability")
    if cfg.get("availability_mode", "latest") not in ("all", "any", "latest"):
        complain("availability_mode not all/any/latest")

    dev = cfg.get("device")
    if not isinstance(dev, dict):
        complain("device block missing")
    else:
        dev = expand(dev, DEVICE_ABBREVIATIONS, "device.", complain)
        for k in sorted(set(dev) - DEVICE_KEYS):
            complain(f"unknown device key {k!r}")
        ids = dev.get("identifiers")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
            complain("device.identifiers must be a non-empty list of strings")
        for k in ("manufacturer", "model", "sw_version", "hw_version", "name", "serial_number"):
            if k in dev and not isinstance(dev[k], str):
                complain(f"device.{k} must be a string")
    if "origin" in cfg:
        o = cfg["origin"]
        if not isinstance(o, dict) or not isinstance(
                expand(o, ORIGIN_ABBREVIATIONS, "origin.", complain).get("name"), str):
            complain("origin must be an object with a name")

    dc = cfg.get("device_class")
    if component == "binary_sensor":
        if dc is not None and dc not in BINARY_SENSOR_DEVICE_CLASSES:
            complain(f"device_class {dc!r} is not a binary_sensor device class")
        if "value_template" in cfg and not ("payload_on" in cfg and "payload_off" in cfg):
            complain("value_template without both payload_on and payload_off")
        return

    unit = cfg.get("unit_of_measurement")
    sc = cfg.get("state_class")
    if sc is not None and sc not in ALL_STATE:
        complain(f"state_class {sc!r} not measurement/total/total_increasing")
    if "last_reset_value_template" in cfg and sc != T:
        complain("last_reset_value_template needs state_class total")
    if "options" in cfg and (dc != "enum" or unit is not None or sc is not None):
        complain("options only with device_class enum and without unit/state_class")
    if dc is None:
        return  # HA takes any unit without a device class (heart rate: "bpm", no class)
    if dc not in SENSOR_DEVICE_CLASSES:
        complain(f"device_class {dc!r} is not a sensor device class")
        return
    units, states = SENSOR_DEVICE_CLASSES[dc]
    if units is not ANY and unit not in units:
        shown = sorted(u for u in units if u is not None) or ["none"]
        complain(f"unit {unit!r} is not valid with device_class {dc} ({', '.join(shown)})")
    if sc is not None and sc not in states:
        complain(f"state_class {sc} is not valid with device_class {dc} "
                 f"({', '.join(sorted(states)) or 'none'})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--prefix", default="homeassistant")
    a = ap.parse_args()
    try:
        with open(a.file, encoding="utf-8") as f:
            configs = json.load(f)
        if not isinstance(configs, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        print(f"check_ha_discovery: {a.file}: {e}", file=sys.stderr)
        return 2

    complaints = 0
    summary = {"entities": 0, "removed": 0, "components": {}}
    unique = {}
    for topic, text in sorted(configs.items()):
        def complain(msg, topic=topic):
            nonlocal complaints
            complaints += 1
            print(f"{topic}: {msg}", file=sys.stderr)

        m = TOPIC.fullmatch(topic[len(a.prefix) + 1:]) if topic.startswith(a.prefix + "/") else None
        if not m:
            complain(f"not <{a.prefix}>/<component>/[<node_id>/]<object_id>/config "
                     "with ids in [a-zA-Z0-9_-]")
            continue
        component = m["component"]
        if text in ("", None):
            summary["removed"] += 1
            continue
        if component not in COMPONENT_KEYS:
            complain(f"component {component!r} is not checked by this script")
            continue
        try:
            cfg = json.loads(text)
        except ValueError as e:
            complain(f"payload is not JSON: {e}")
            continue
        if not isinstance(cfg, dict):
            complain("payload is not a JSON object")
            continue
        summary["entities"] += 1
        summary["components"][component] = summary["components"].get(component, 0) + 1
        check(topic, cfg, component, complain)
        uid = cfg.get("unique_id", cfg.get("uniq_id"))
        if isinstance(uid, str):
            key = (component, uid)  # HA keys entities by platform and unique_id
            if key in unique:
                complain(f"unique_id {uid!r} also used by {unique[key]}")
            unique[key] = topic
    print(json.dumps(summary, sort_keys=True))
    return 1 if complaints else 0


if __name__ == "__main__":
    sys.exit(main())
