// Package provision sets up an Odoo 17, 18 or 19 database for the Odoo
// connector (package odoo): the commands `intentplane odoo setup` and
// `intentplane odoo demo` and the tests use it; the gateway never does.
//
// Admin acts as the database's administrator: it creates, copies and
// drops databases (with the server's master password), installs the
// account module, sets up companies and their currencies, makes the
// connector's three users with exactly their groups (ReaderGroups,
// PayerGroups, BankAdminGroups) and their API keys (NewAPIKey, Odoo 19),
// and enters data as the ERP's own users would: vendors, bank accounts,
// bills, credit notes, hand payments and exchange rates (it implements
// erptest.Seeder and erptest.RateSetter). It reads what it entered back
// through the connector, as the administrator.
//
// Setup brings a database to what intentplane needs, idempotently, and
// returns the connector's odoo.Config; with SetupConfig.DemoData it
// enters the demo data set (DemoVendor, DemoBill, ...), which matches the
// in-memory demo of the accounts-payable pack.
//
// Package provision may import odoo, erp, core/intent and the connector's
// RPC layer (odoo/internal/rpc); it must never import core/gateway, a
// pack or a store, and package odoo never imports it.
package provision
