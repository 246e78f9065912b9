// @peculiar/x509 with its prerequisite: it resolves its ASN.1 services through tsyringe, which needs the
// Reflect metadata API installed before the library loads. Import the library only through this module.
import 'reflect-metadata';

export * from '@peculiar/x509';
