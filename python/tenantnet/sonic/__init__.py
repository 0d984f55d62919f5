"""The schemes on SONiC switches: config_db QoS tables and their validator."""
