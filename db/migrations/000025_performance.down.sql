-- pkg/events' performance triggers (db.ApplyFunctions attaches them) go with the tables they write.
DROP TRIGGER IF EXISTS performance_clicks_insert ON clicks;
DROP TRIGGER IF EXISTS performance_clicks_update ON clicks;
DROP TRIGGER IF EXISTS performance_clicks_delete ON clicks;
DROP TRIGGER IF EXISTS performance_leads_insert ON leads;
DROP TRIGGER IF EXISTS performance_leads_update ON leads;
DROP TRIGGER IF EXISTS performance_leads_delete ON leads;
DROP TRIGGER IF EXISTS performance_sales_insert ON sales;
DROP TRIGGER IF EXISTS performance_sales_update ON sales;
DROP TRIGGER IF EXISTS performance_sales_delete ON sales;
DROP TRIGGER IF EXISTS performance_commissions_insert ON commissions;
DROP TRIGGER IF EXISTS performance_commissions_update ON commissions;
DROP TRIGGER IF EXISTS performance_commissions_delete ON commissions;
DROP TRIGGER IF EXISTS performance_clawbacks_insert ON commission_clawbacks;
DROP VIEW performance_live;
DROP TABLE performance_deltas;
DROP TABLE performance_daily;
